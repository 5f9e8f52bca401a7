import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App.tsx';
import { createI18nProvider } from './i18n/index.ts';
import { loadStatus } from './status/status.ts';

/** Languages first (every screen needs them), then the status object, then the app. */
async function start() {
  const [i18nProvider, loaded] = await Promise.all([createI18nProvider(), loadStatus()]);
  const root = document.getElementById('root');
  if (!root) throw new Error('index.html has no #root');
  createRoot(root).render(
    <StrictMode>
      <App i18nProvider={i18nProvider} loaded={loaded} />
    </StrictMode>,
  );
}

void start();
