// The extension's fixed identities in each browser, and the native host's name: the host manifests name them.

/** Native messaging host name (Chromium allows lower-case letters, digits, dots and underscores). */
export const HOST_NAME = 'org.dnscost.host';

/** Firefox add-on id (manifest `browser_specific_settings.gecko.id`). */
export const GECKO_ID = 'dnscost@dnscost.org';

/**
 * Chromium extension id: the first 32 hex digits of sha256(DER public key in manifest.json's `key`), each digit
 * mapped 0-f → a-p. Fixed by that key, so the host manifest's `allowed_origins` can name it.
 */
export const CHROMIUM_ID = 'anejdalnjfcocmlilffoiekfgcianadn';

/** The public key behind CHROMIUM_ID (base64 DER SubjectPublicKeyInfo), as manifest.json carries it. */
export const CHROMIUM_KEY = 'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAjxkt697XL2mV1P5EXbjQHg9ycjHaI5cHy0eqFqBZo0e4EAmZkmLPHLSVcl0F83kKEY0TL6dUEfQ3/7nbKKtwH+2DS7clPeVJY8sGHp3bTQkbMbvoplhVpy8AyCz1P6ZoXlNXLC1g5dWHjEdteorxZ1g5eVETqTkK47mQBumkWTtkfI/KqGZTgHZd98n5ohwN+X8ZeIZSjRAgEAQl6XwrKYS0Zf8iBXE8/IivvczbrFYFe1ynwwTqnFCEUN1xcme+7iW+VhLlmnxg6BkJGCfAjPZepKjGuaR8gZDXe7qDAoxSRU415u89WMZ8M8PlSECAtZAoIQusqKYZqgzKp/1+4wIDAQAB';

/** A Chromium extension id: 32 letters a–p (a hash's first 128 bits, one letter per hex digit). */
export function isChromiumId(id: string): boolean {
  return /^[a-p]{32}$/.test(id);
}

/** A Firefox add-on id: `name@domain` (letters, digits, `._+-`) or a `{UUID}`. */
export function isGeckoId(id: string): boolean {
  return /^[\w.+-]+@[\w.-]+$/.test(id) || /^\{[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\}$/i.test(id);
}
