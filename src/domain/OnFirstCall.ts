/**
 * The function `make` returns, made on its first call. Schema's decoders and encoders compile the schema's whole
 * parser when they are made: made at a module's top level, every command pays at start-up for the parsers of every
 * module it loads, used or not; made on first call, a command pays for those it uses, when it first uses them.
 */
export const onFirstCall = <A, B>(make: () => (input: A) => B): (input: A) => B => {
  let made: ((input: A) => B) | undefined
  return (input) => (made ??= make())(input)
}
