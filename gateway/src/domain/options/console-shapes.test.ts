import { describe, expect, it } from 'vitest';
import { AppError } from '../../errors.ts';
import { validateOption } from './validate.ts';

/** The message validateOption throws for this input (English). */
function rejection(key: string, value: unknown): string {
  try {
    validateOption(key, JSON.stringify(value));
  } catch (error) {
    if (error instanceof AppError && error.code === 'OPTION_INVALID_SHAPE') return error.localized('en');
    throw error;
  }
  throw new Error(`${key}=${JSON.stringify(value)} was accepted`);
}

const accepts = (key: string, value: unknown) => expect(validateOption(key, JSON.stringify(value))).toBeTruthy();

// The console's top bar, side menu and dashboard panels read these (console/src/status); new-api's front end too.
describe('shapes of the console layout options', () => {
  it('takes side-menu sections of booleans only', () => {
    accepts('SidebarModulesAdmin', { console: { enabled: true, log: false }, admin: { models: false } });
    expect(rejection('SidebarModulesAdmin', { console: { log: 'no' } })).toContain(
      '$["console"]["log"] must be true or false',
    );
    expect(rejection('SidebarModulesAdmin', { console: true })).toContain('$["console"] must be an object');
  });

  it('takes API addresses with url, route, description and a known colour', () => {
    const entry = { url: 'https://api.example.com', route: 'Main', description: 'Fast', color: 'blue' };
    accepts('console_setting.api_info', [entry, { ...entry, id: 2, color: 'light-green' }]);
    expect(rejection('console_setting.api_info', [{ ...entry, color: 'gold' }])).toContain(
      '$[0]["color"] must be one of',
    );
    const { route: _route, ...withoutRoute } = entry;
    expect(rejection('console_setting.api_info', [withoutRoute])).toContain('$[0]["route"] must be a string');
  });

  it('takes announcements with content and a date, FAQ entries with question and answer', () => {
    accepts('console_setting.announcements', [{ content: 'Hi', publishDate: '2026-11-26T10:00:00Z', type: 'success' }]);
    expect(rejection('console_setting.announcements', [{ content: 'Hi' }])).toContain('$[0]["publishDate"]');
    accepts('console_setting.faq', [{ question: 'Why?', answer: 'Because.' }]);
    expect(rejection('console_setting.faq', [{ question: 'Why?', answer: 42 }])).toContain(
      '$[0]["answer"] must be a string',
    );
  });
});
