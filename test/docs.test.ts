import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { configurationMarkdown } from '../scripts/gen-config-docs.js';

test('docs/configuration.md is generated from the settings table (run npm run docs:config)', () => {
  assert.equal(fs.readFileSync('docs/configuration.md', 'utf8'), configurationMarkdown());
});
