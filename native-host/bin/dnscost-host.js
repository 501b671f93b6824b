#!/usr/bin/env node
// The dnscost-host command: runs the compiled host (`scripts/setup` builds it into dist/).
import '../../dist/native-host/src/main.js';
