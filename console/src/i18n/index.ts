import { createInstance } from 'i18next';
import { getI18nProvider } from 'ra-i18n-i18next';
import type { I18nProvider } from 'react-admin';
import { en } from './en.ts';
import { zh } from './zh.ts';

/** Interface languages (spec doc 1 §9): Chinese, the default and fallback, and English. */
export const LANGUAGES = [
  { locale: 'zh', name: '中文' },
  { locale: 'en', name: 'English' },
] as const;
export type Language = (typeof LANGUAGES)[number]['locale'];
export const DEFAULT_LANGUAGE: Language = 'zh';

/** Where the chosen language is remembered (spec doc 1 §3). */
export const LANGUAGE_KEY = 'i18nextLng';

export const i18next = createInstance();

/** A stored or requested language tag reduced to one we have: en-US → en, anything else → zh. */
export function normalizeLanguage(tag: string | null | undefined): Language {
  return tag?.toLowerCase().startsWith('en') ? 'en' : DEFAULT_LANGUAGE;
}

export function storedLanguage(): Language {
  try {
    return normalizeLanguage(localStorage.getItem(LANGUAGE_KEY));
  } catch {
    return DEFAULT_LANGUAGE;
  }
}

/** The language the interface shows now (sent to the gateway as Accept-Language). */
export function currentLanguage(): Language {
  return i18next.isInitialized ? normalizeLanguage(i18next.language) : storedLanguage();
}

/** react-admin's i18nProvider on i18next, with both catalogues and react-admin's own strings in each. */
export async function createI18nProvider(): Promise<I18nProvider> {
  i18next.on('languageChanged', (language) => {
    document.documentElement.lang = normalizeLanguage(language);
  });
  return getI18nProvider(
    i18next,
    {
      resources: { zh: { translation: zh }, en: { translation: en } },
      lng: storedLanguage(),
      fallbackLng: DEFAULT_LANGUAGE,
      supportedLngs: LANGUAGES.map((language) => language.locale),
      interpolation: { escapeValue: false },
    },
    LANGUAGES.map((language) => ({ ...language })),
  );
}
