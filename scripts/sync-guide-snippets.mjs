#!/usr/bin/env node
// Copies each example file into the guide code blocks that name it (```js file=examples/...), so the
// guides show exactly the code the end-to-end tests run (test/e2e/guides.test.ts checks they match).
import fs from 'node:fs';

for (const guide of ['docs/guide-api.md', 'docs/guide-web-app.md']) {
  const doc = fs.readFileSync(guide, 'utf8');
  const synced = doc.replace(/^```(\w+) file=(\S+)\n[\s\S]*?^```$/gm, (_, lang, file) => `\`\`\`${lang} file=${file}\n${fs.readFileSync(file, 'utf8').replace(/\n*$/, '\n')}\`\`\``);
  if (synced !== doc) fs.writeFileSync(guide, synced);
}
