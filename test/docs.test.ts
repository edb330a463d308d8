import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { configurationMarkdown } from '../scripts/gen-config-docs.js';
import { messagesMarkdown } from '../scripts/gen-messages-docs.js';

test('docs/configuration.md is generated from the settings table (run npm run docs:config)', () => {
  assert.equal(fs.readFileSync('docs/configuration.md', 'utf8'), configurationMarkdown());
});

test('docs/messages.md is generated from the message catalogs (run npm run docs:messages)', () => {
  assert.equal(fs.readFileSync('docs/messages.md', 'utf8'), messagesMarkdown());
});
