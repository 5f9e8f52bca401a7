/**
 * Errors a user can see. Each has a stable code, an HTTP status and a message in both languages;
 * `{name}` placeholders in a message are filled from the error's params.
 * Each area declares its own catalogue with `defineErrors`; the HTTP layers render any AppError.
 */
export type Language = 'zh' | 'en';

export interface ErrorSpec {
  code: string;
  status: number;
  message: Record<Language, string>;
}

type ErrorSpecs = Record<string, { status: number; message: Record<Language, string> }>;

export function defineErrors<T extends ErrorSpecs>(specs: T): { readonly [K in keyof T]: ErrorSpec } {
  return Object.fromEntries(Object.entries(specs).map(([code, spec]) => [code, { code, ...spec }])) as {
    [K in keyof T]: ErrorSpec;
  };
}

export type ErrorParams = Record<string, string | number>;

export class AppError extends Error {
  override name = 'AppError';
  readonly spec: ErrorSpec;
  readonly params: ErrorParams;

  constructor(spec: ErrorSpec, params: ErrorParams = {}) {
    super(format(spec.message.en, params));
    this.spec = spec;
    this.params = params;
  }
  get code(): string {
    return this.spec.code;
  }
  get status(): number {
    return this.spec.status;
  }
  localized(language: Language): string {
    return format(this.spec.message[language], this.params);
  }
}

function format(template: string, params: ErrorParams): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in params ? String(params[name]) : whole));
}
