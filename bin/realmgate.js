#!/usr/bin/env node
// The installed command runs the compiled CLI (npm install builds it through the "prepare" script).
import '../dist/cli.js';
