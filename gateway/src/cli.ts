import { readFileSync } from 'node:fs';
import { type Config, ConfigError, loadConfig } from './config.ts';

/** The configuration of a command-line entry point; a bad environment exits with code 2 and says why. */
export function configFromEnvironment(): Config {
  const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  try {
    return loadConfig(process.env, version);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`tollgate: configuration error: ${error.message}`);
    process.exit(2);
  }
}
