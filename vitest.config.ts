import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'gateway/src/**/*.test.ts',
      'operator/src/**/*.test.ts',
      'console/src/**/*.test.ts',
      'tests/**/*.test.ts',
    ],
    // The browser tests need console/dist: built here, once, when missing or older than its sources.
    globalSetup: ['tests/support/global-setup.ts', 'tests/browser/build-console.ts'],
    reporters: ['default', './tests/support/summary-reporter.ts'],
    pool: 'forks',
    // Two cores: more workers only fight over them, and every test file opens its own database.
    maxWorkers: 2,
    testTimeout: 30_000,
    // expect.poll waits for what a browser page or a process shows next; its 1 s default is shorter than a
    // busy 2-core CI machine (a console search debounces, then asks the gateway) takes to get there.
    expect: { poll: { timeout: 10_000 } },
    hookTimeout: 60_000,
  },
});
