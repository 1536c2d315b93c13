#!/usr/bin/env node
import "../dist/cli/myclaw.mjs"
