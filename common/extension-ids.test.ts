import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { test } from 'vitest';
import { CHROMIUM_ID, CHROMIUM_KEY, GECKO_ID } from './extension-ids.js';

test('the Chromium id follows from the manifest key; the manifest carries both ids', () => {
  const hex = createHash('sha256').update(Buffer.from(CHROMIUM_KEY, 'base64')).digest('hex').slice(0, 32);
  const id = [...hex].map((c) => String.fromCharCode(97 + parseInt(c, 16))).join('');
  assert.equal(id, CHROMIUM_ID);
  const manifest = JSON.parse(readFileSync(new URL('../manifest.json', import.meta.url), 'utf8')) as {
    key: string;
    browser_specific_settings: { gecko: { id: string } };
  };
  assert.equal(manifest.key, CHROMIUM_KEY);
  assert.equal(manifest.browser_specific_settings.gecko.id, GECKO_ID);
});
