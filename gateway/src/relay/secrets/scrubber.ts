import { OPTION_DEFINITIONS } from '../../domain/options/definitions.ts';
import type { OptionsService } from '../../domain/options/index.ts';
import { SecretMask } from '../../domain/secret-mask.ts';
import type { ChannelSnapshot } from '../types.ts';
import { channelSecrets } from './channel-secrets.ts';

/** Options holding credentials (payment keys, OAuth client secrets, the SMTP password, bot tokens). */
const SECRET_OPTIONS: readonly string[] = OPTION_DEFINITIONS.filter((d) => d.secret).map((d) => d.key);

export interface SecretScrubberConfig {
  options: OptionsService;
  /** The gateway's master secret (SECRET_KEY, or the generated one): sessions and at-rest encryption derive from it. */
  masterSecret: string;
  /** A channel by id, for text that names its channel by id (task rows). */
  channel: (id: number) => ChannelSnapshot | undefined;
}

/**
 * Removes secrets from upstream text before it reaches a user or a log a user can read (domain/secret-mask.ts
 * has the rule): the gateway's own secrets always, and those of the channel the text came from. Masks are built
 * once per channel snapshot (a reload makes a new snapshot, so an edited key is picked up) and once per change
 * of the secret options.
 */
export class SecretScrubber {
  readonly #config: SecretScrubberConfig;
  readonly #channels = new WeakMap<ChannelSnapshot, { version: number; mask: SecretMask }>();
  #gateway: SecretMask | undefined;
  #version = 0;
  readonly #unsubscribe: () => void;

  constructor(config: SecretScrubberConfig) {
    this.#config = config;
    this.#unsubscribe = config.options.onChange((change) => {
      if (SECRET_OPTIONS.includes(change.key)) {
        this.#gateway = undefined;
        this.#version++;
      }
    });
  }

  /** The text without the gateway's secrets and those of `channel` (a snapshot or an id). */
  scrub(text: string, channel?: ChannelSnapshot | number): string {
    return this.#mask(channel).mask(text);
  }

  /** Every string inside a parsed JSON value scrubbed, as `scrub` does. */
  scrubDeep<T>(value: T, channel?: ChannelSnapshot | number): T {
    return this.#mask(channel).maskDeep(value);
  }

  close(): void {
    this.#unsubscribe();
  }

  #mask(channel: ChannelSnapshot | number | undefined): SecretMask {
    const snapshot = typeof channel === 'number' ? this.#config.channel(channel) : channel;
    if (!snapshot) return this.#gatewayMask();
    const cached = this.#channels.get(snapshot);
    if (cached?.version === this.#version) return cached.mask;
    const mask = new SecretMask([...this.#gatewaySecrets(), ...channelSecrets(snapshot)]);
    this.#channels.set(snapshot, { version: this.#version, mask });
    return mask;
  }

  #gatewayMask(): SecretMask {
    this.#gateway ??= new SecretMask(this.#gatewaySecrets());
    return this.#gateway;
  }

  #gatewaySecrets(): string[] {
    const { options, masterSecret } = this.#config;
    return [masterSecret, ...SECRET_OPTIONS.map((key) => options.get(key))];
  }
}
