#!/usr/bin/env node
require("../dist/cli/myclaw.cjs")
