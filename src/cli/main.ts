#!/usr/bin/env node
import { version } from "../Version.js"
import { helpOrVersion, usage } from "./Usage.js"

// The entry point: --help and --version are answered from plain strings; every other command line loads the
// command runner (Effect, the layers) first.
const argv = process.argv.slice(2)
const quick = helpOrVersion(argv)
if (quick === "help") process.stdout.write(`${usage}\n`)
else if (quick === "version") process.stdout.write(`myclaw ${version}\n`)
else void import("./Cli.js").then(({ main }) => main(argv))
