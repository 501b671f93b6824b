// The sites an upload may name. An upload says which site a page was on only when that site is one of these very
// popular registrable domains; every other page is uploaded as "other", so a rare site a person visits never leaves
// the machine by name. Pure (no `node:` or DOM): the extension and the collector share it.
//
// Hand-picked from the head of public popularity rankings (Tranco-style, registrable domains only, no adult or
// sensitive-category sites); regenerating it from a dated ranking is a release task, and a change here changes
// what may be uploaded, so it is versioned with the upload schema.

/** Registrable domains (public suffix + 1 label) an upload may name as `site`; everything else is "other". */
export const POPULAR_SITES = [
  'adobe.com', 'airbnb.com', 'aliexpress.com', 'amazon.co.jp', 'amazon.co.uk', 'amazon.com', 'amazon.de',
  'amazon.fr', 'amazon.in', 'apple.com', 'archive.org', 'atlassian.com', 'baidu.com', 'bbc.co.uk', 'bbc.com',
  'bing.com', 'bitbucket.org', 'bloomberg.com', 'booking.com', 'canva.com', 'cloudflare.com', 'cnbc.com',
  'cnn.com', 'coursera.org', 'craigslist.org', 'dailymail.co.uk', 'discord.com', 'disneyplus.com', 'docker.com',
  'dropbox.com', 'duckduckgo.com', 'ebay.com', 'ebay.de', 'espn.com', 'etsy.com', 'facebook.com', 'figma.com',
  'forbes.com', 'github.com', 'gitlab.com', 'gmail.com', 'google.co.in', 'google.co.jp', 'google.co.uk',
  'google.com', 'google.com.br', 'google.de', 'google.fr', 'hulu.com', 'ikea.com', 'imdb.com', 'indeed.com',
  'instagram.com', 'linkedin.com', 'live.com', 'mail.ru', 'medium.com', 'microsoft.com', 'mozilla.org',
  'msn.com', 'naver.com', 'netflix.com', 'nih.gov', 'notion.so', 'npmjs.com', 'nytimes.com', 'office.com',
  'openai.com', 'paypal.com', 'pinterest.com', 'python.org', 'quora.com', 'rakuten.co.jp', 'reddit.com',
  'reuters.com', 'salesforce.com', 'samsung.com', 'shopify.com', 'slack.com', 'spotify.com',
  'stackoverflow.com', 'steampowered.com', 'target.com', 'telegram.org', 'theguardian.com', 'tiktok.com',
  'trello.com', 'tumblr.com', 'twitch.tv', 'uber.com', 'vimeo.com', 'vk.com', 'walmart.com', 'washingtonpost.com',
  'weather.com', 'whatsapp.com', 'wikimedia.org', 'wikipedia.org', 'wordpress.com', 'wordpress.org', 'x.com',
  'yahoo.co.jp', 'yahoo.com', 'yandex.ru', 'yelp.com', 'youtube.com', 'zillow.com', 'zoom.us',
] as const;

/** One of POPULAR_SITES. */
export type PopularSite = (typeof POPULAR_SITES)[number];

const SET: ReadonlySet<string> = new Set(POPULAR_SITES);

/** The `site` an upload names for a registrable domain: the domain when it is popular, otherwise "other". */
export function uploadSite(registrableDomain: string): PopularSite | 'other' {
  const d = registrableDomain.toLowerCase();
  return SET.has(d) ? (d as PopularSite) : 'other';
}
