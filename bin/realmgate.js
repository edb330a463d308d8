#!/usr/bin/env node
// The installed command runs the bundled CLI (npm install builds it through the "prepare" script).
import '../dist/realmgate.mjs';
