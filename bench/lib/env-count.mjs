// A count a diagnostic reads from its environment: the variable's whole number, `fallback` when unset or empty,
// and a clear error naming the variable for anything else.
export const countFromEnv = (name, fallback) => {
  const value = Number(process.env[name] || fallback);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name}: a whole number of at least 1, not ${process.env[name]}`);
  return value;
};
