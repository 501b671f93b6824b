#!/usr/bin/env node
// The dnscost-collector command: runs the compiled collector (`npx tsc -p .` or `scripts/setup` builds dist/).
import '../../dist/collector/main.js';
