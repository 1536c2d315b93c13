/**
 * The function `make` returns, made on its first call. Schema's decoders and encoders compile the schema's whole
 * parser when they are made: made at a module's top level, every command pays at start-up for the parsers of every
 * module it loads, used or not; made on first call, a command pays for those it uses, when it first uses them. The
 * optional second argument (a parser's options) is passed on as it is.
 */
export const onFirstCall = <A, O, B>(make: () => (input: A, options?: O) => B): (input: A, options?: O) => B => {
  let made: ((input: A, options?: O) => B) | undefined
  return (input, options) => (made ??= make())(input, options)
}
