/**
 * The CommonJS copy of the command runner that the bundled command line loads with V8's code cache: its folder
 * (relative to the bundle's entry) and its entry file. The tsc output has none (undefined); the bundle script
 * writes the copy and sets this constant in the bundle.
 */
export const runnerBundle: { readonly dir: string; readonly entry: string } | undefined = undefined
