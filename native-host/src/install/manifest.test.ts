// The host manifest per browser family, and the arguments each family starts the host with.
import assert from 'node:assert/strict';
import { test } from 'vitest';
import { CHROMIUM_ID, GECKO_ID, HOST_NAME } from '../../../common/extension-ids.js';
import { targetFor } from './browsers.js';
import { browserArgs } from './hello-probe.js';
import { addedIds, CHROMIUM_ORIGIN, manifestFor, manifestText } from './manifest.js';
import { BROWSERS, placeFor } from './platform.js';

test('manifests: Firefox names the add-on id, the Chromium family the exact origin with its trailing slash', () => {
  assert.equal(CHROMIUM_ORIGIN, `chrome-extension://${CHROMIUM_ID}/`);
  for (const b of BROWSERS) {
    const m = manifestFor(b, '/x/dnscost-host');
    assert.equal(m.name, HOST_NAME);
    assert.equal(m.type, 'stdio');
    assert.equal(m.path, '/x/dnscost-host');
    if (b === 'firefox') {
      assert.deepEqual(m.allowed_extensions, [GECKO_ID]);
      assert.equal(m.allowed_origins, undefined);
    } else {
      assert.deepEqual(m.allowed_origins, [`chrome-extension://${CHROMIUM_ID}/`]);
      assert.equal(m.allowed_extensions, undefined);
    }
  }
  assert.deepEqual(browserArgs(targetFor('firefox', placeFor('linux', '/h', {}, true)), 'linux'), ['/h/.mozilla/native-messaging-hosts/org.dnscost.host.json', GECKO_ID]);
  assert.deepEqual(browserArgs(targetFor('edge', placeFor('linux', '/h', {}, true)), 'linux'), [CHROMIUM_ORIGIN]);
});

test('added ids: each family takes its own kind, once; read back from a manifest of ours, never from another\'s', () => {
  const store = 'b'.repeat(32);
  const extra = [store, store, 'beta@example.org', 'not an id'];
  assert.deepEqual(manifestFor('chrome', '/x', extra).allowed_origins, [CHROMIUM_ORIGIN, `chrome-extension://${store}/`]);
  assert.deepEqual(manifestFor('firefox', '/x', extra).allowed_extensions, [GECKO_ID, 'beta@example.org']);
  assert.deepEqual(addedIds(manifestText('chrome', '/x', extra)), [store]);
  assert.deepEqual(addedIds(manifestText('firefox', '/x', extra)), ['beta@example.org']);
  assert.deepEqual(addedIds(manifestText('chrome', '/x')), []);
  assert.deepEqual(addedIds(JSON.stringify({ name: 'org.other', allowed_origins: [`chrome-extension://${store}/`] })), []);
  assert.deepEqual(addedIds('{"name":'), []);
  assert.deepEqual(addedIds(null), []);
});
