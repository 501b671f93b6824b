// Entry of the pages that are only text (the privacy policy, how to turn encrypted DNS on): their words, filled in.
import { browserI18n } from '../locale.js';
import { localizePage } from './localize.js';

localizePage(browserI18n());
