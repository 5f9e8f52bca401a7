import { type ComponentType, lazy } from 'react';

/**
 * A component loaded when it is first rendered, from a module that exports it by name: every page
 * and resource view is its own chunk, so the first load carries only the shell.
 */
export function lazyNamed<Props extends object = Record<string, never>>(
  load: () => Promise<Record<string, unknown>>,
  name: string,
): ComponentType<Props> {
  return lazy(async () => ({ default: (await load())[name] as ComponentType<Props> }));
}
