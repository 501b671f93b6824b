// Reading browser enterprise policy for the extension (storage.managed), with each browser's gap named.
import { browser } from '../browser.js';

/**
 * The reader of managed storage, or null where there is none. Chromium delivers policy (3rdparty.extensions.ID)
 * only when the manifest declares storage.managed_schema, and returns {} without a policy; Firefox reads
 * ~/.mozilla/managed-storage/ID.json or policies.json ("3rdparty") and rejects when neither names the add-on
 * (settings-store.ts treats that as "no policy"). Some contexts (Firefox Android, old versions) lack the area.
 */
export function readManagedStorage(): (() => Promise<Record<string, unknown>>) | null {
  const managed = (browser.storage as { managed?: { get(keys?: null): Promise<Record<string, unknown>> } }).managed;
  if (!managed || typeof managed.get !== 'function') return null;
  return () => managed.get(null);
}
