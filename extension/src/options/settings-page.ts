// The options page's state, and the one way a change reaches the settings: a settings message to the background,
// whose reply (a SettingsView) redraws every section. Nothing here writes storage.
//
// Lifecycle: index.ts creates one SettingsPage with the function that draws the sections, then refresh() asks for
// the view (at start, and again when an administrator's policy changes). Every reply that carries a view replaces
// `current` and redraws; a failed reply is shown in the status line and changes nothing.
import type { ExtensionMessage } from '../messages/index.js';
import type { SettingsFailure, SettingsView } from '../messages/settings.js';
import { send } from '../ui/messages.js';
import { type Failure } from '../../../common/errors.js';
import { say, sayFailure } from './feedback.js';

/** What a settings-set message may change (only the fields given). */
export type SettingsChanges = Extract<ExtensionMessage, { type: 'settings-set' }>['changes'];

/** The view in force and the ways to change it; each section's handlers get this page. */
export class SettingsPage {
  #current: SettingsView | null = null;
  readonly #draw: (v: SettingsView) => void;

  /** `draw` fills every section from a view. */
  constructor(draw: (v: SettingsView) => void) {
    this.#draw = draw;
  }

  /** The view last shown (handlers run only after the first one was). */
  get current(): SettingsView {
    return this.#current!;
  }

  /** Shows `v` in every section and marks the page ready (`body.dataset.settings`). */
  show(v: SettingsView): void {
    this.#current = v;
    this.#draw(v);
    document.body.dataset.settings = 'ready';
  }

  /** Applies a reply that carries a SettingsView (or shows its failure); true when it was a view. */
  take(reply: SettingsView | Failure | SettingsFailure, done?: string): reply is SettingsView {
    if (!reply.ok) {
      sayFailure(reply);
      return false;
    }
    this.show(reply);
    if (done) say(done);
    return true;
  }

  /** Sends `changes`; on success shows the new view and says `done`. True when they were applied. */
  async change(changes: SettingsChanges, done: string): Promise<boolean> {
    return this.take(await send({ type: 'settings-set', changes }), done);
  }

  /** Asks the background for the view and shows it, or its failure. */
  async refresh(): Promise<void> {
    const r = await send({ type: 'settings-get' });
    if (r.ok) this.show(r);
    else sayFailure(r);
  }
}
