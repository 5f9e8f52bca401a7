import { type ReactNode, useMemo } from 'react';
import { Admin, CustomRoutes, type I18nProvider, Resource } from 'react-admin';
import { BrowserRouter, Navigate, Route, useLocation } from 'react-router';
import { ShellLayout } from './layout/Layout.tsx';
import { NotFound } from './layout/NotFound.tsx';
import { authProvider } from './providers/authProvider.ts';
import { dataProvider } from './providers/dataProvider.ts';
import { consoleStore } from './providers/store.ts';
import { Guard, PAGES, RESOURCES } from './routes.tsx';
import { StatusProvider, useStatus } from './status/StatusContext.tsx';
import type { StatusLoad } from './status/status.ts';
import { darkTheme, lightTheme } from './theme.ts';

export interface AppProps {
  i18nProvider: I18nProvider;
  /** GET /api/status as loaded at start (or the cached or default status, with the failure to show). */
  loaded: StatusLoad;
}

/** The console: status context, setup redirect, and react-admin with the shell, pages and resources. */
export function App({ i18nProvider, loaded }: AppProps) {
  const { status } = loaded;
  const store = useMemo(() => consoleStore({ sidebarOpen: !status.default_collapse_sidebar }), [status]);
  return (
    <BrowserRouter>
      <StatusProvider initial={loaded}>
        <SetupGate>
          <Admin
            dataProvider={dataProvider}
            authProvider={authProvider}
            i18nProvider={i18nProvider}
            store={store}
            layout={ShellLayout}
            catchAll={NotFound}
            loginPage={false}
            lightTheme={lightTheme}
            darkTheme={darkTheme}
            defaultTheme="light"
            title={status.system_name}
            disableTelemetry
          >
            <CustomRoutes>
              {PAGES.map((page) => (
                <Route key={page.path} path={page.path} element={<Guard access={page.access}>{page.element}</Guard>} />
              ))}
            </CustomRoutes>
            {RESOURCES.map((resource) => (
              <Resource key={resource.name} {...resource} />
            ))}
          </Admin>
        </SetupGate>
      </StatusProvider>
    </BrowserRouter>
  );
}

/** Until setup is done every path goes to /setup; afterwards /setup goes to / (spec doc 1 §2). */
function SetupGate({ children }: { children: ReactNode }) {
  const { status } = useStatus();
  const { pathname } = useLocation();
  if (!status.setup && pathname !== '/setup') return <Navigate to="/setup" replace />;
  if (status.setup && pathname === '/setup') return <Navigate to="/" replace />;
  return children;
}
