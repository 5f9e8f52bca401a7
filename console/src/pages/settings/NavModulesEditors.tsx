import {
  Box,
  Button,
  Card,
  CardContent,
  FormControlLabel,
  FormHelperText,
  Grid,
  Switch,
  Typography,
} from '@mui/material';
import { type ReactNode, useEffect, useMemo, useState } from 'react';
import { useNotify, useTranslate } from 'react-admin';
import {
  DEFAULT_HEADER_NAV,
  DEFAULT_SIDEBAR,
  HEADER_ENTRIES,
  type HeaderNav,
  headerNavValue,
  readHeaderNav,
  readSidebar,
  SIDEBAR_SECTIONS,
  type SidebarModules,
} from '../../status/modules.ts';
import { useOptions } from './OptionsContext.tsx';

/** A switch's input marked with the entry it turns (data-module), for tests and tools. */
const moduleSwitch = (id: string) => ({ input: { 'data-module': id } });

/** Saves one option when its text changed (the options' save shows the outcome). */
function useSaveOption(key: string) {
  const notify = useNotify();
  const { options, save } = useOptions();
  const [saving, setSaving] = useState(false);
  const submit = async (value: string) => {
    if (value === (options[key] ?? '')) {
      notify('settings.messages.nothing_changed', { type: 'info' });
      return;
    }
    setSaving(true);
    try {
      await save([{ key, value }]);
    } finally {
      setSaving(false);
    }
  };
  return { stored: options[key] ?? '', saving, submit };
}

function EditorCard(props: {
  id: string;
  title: string;
  help: string;
  saving: boolean;
  onReset(): void;
  onSave(): void;
  children: ReactNode;
}) {
  const translate = useTranslate();
  return (
    <Card variant="outlined" sx={{ mb: 2 }} data-section={props.id}>
      <CardContent>
        <Typography variant="subtitle1" sx={{ fontWeight: 600 }}>
          {translate(props.title)}
        </Typography>
        <Typography variant="body2" color="text.secondary" sx={{ mb: 2 }}>
          {translate(props.help)}
        </Typography>
        {props.children}
        <Box sx={{ mt: 2, display: 'flex', gap: 1 }}>
          <Button variant="contained" onClick={props.onSave} disabled={props.saving} data-testid={`save-${props.id}`}>
            {translate('settings.save_section', { section: translate(props.title) })}
          </Button>
          <Button onClick={props.onReset} data-testid={`reset-${props.id}`}>
            {translate('modules.reset')}
          </Button>
        </Box>
      </CardContent>
    </Card>
  );
}

/** HeaderNavModules: which top-bar entries show, and whether Pricing needs a sign-in. */
export function HeaderNavEditor() {
  const translate = useTranslate();
  const { stored, saving, submit } = useSaveOption('HeaderNavModules');
  const start = useMemo(() => readHeaderNav(stored), [stored]);
  const [nav, setNav] = useState<HeaderNav>(start);
  useEffect(() => setNav(start), [start]);

  const isOn = (entry: (typeof HEADER_ENTRIES)[number]) => (entry === 'pricing' ? nav.pricing.enabled : nav[entry]);
  const turn = (entry: (typeof HEADER_ENTRIES)[number], on: boolean) =>
    setNav((current) =>
      entry === 'pricing' ? { ...current, pricing: { ...current.pricing, enabled: on } } : { ...current, [entry]: on },
    );
  return (
    <EditorCard
      id="header_nav"
      title="modules.header.title"
      help="modules.header.help"
      saving={saving}
      onReset={() => setNav(DEFAULT_HEADER_NAV)}
      onSave={() => submit(headerNavValue(stored, nav))}
    >
      <Grid container spacing={1}>
        {HEADER_ENTRIES.map((entry) => (
          <Grid key={entry} size={{ xs: 12, sm: 6, md: 4 }}>
            <FormControlLabel
              control={
                <Switch
                  checked={isOn(entry)}
                  onChange={(event) => turn(entry, event.target.checked)}
                  slotProps={moduleSwitch(`header.${entry}`)}
                />
              }
              label={translate(`shell.nav.${entry}`)}
            />
            {entry === 'docs' && <FormHelperText>{translate('modules.header.docs_help')}</FormHelperText>}
            {entry === 'pricing' && nav.pricing.enabled && (
              <FormControlLabel
                sx={{ ml: 2, display: 'flex' }}
                control={
                  <Switch
                    size="small"
                    checked={nav.pricing.requireAuth}
                    onChange={(event) =>
                      setNav((current) => ({
                        ...current,
                        pricing: { ...current.pricing, requireAuth: event.target.checked },
                      }))
                    }
                    slotProps={moduleSwitch('header.pricing.requireAuth')}
                  />
                }
                label={translate('modules.header.pricing_require_auth')}
              />
            )}
          </Grid>
        ))}
      </Grid>
    </EditorCard>
  );
}

const SECTION_LABELS: Record<keyof typeof SIDEBAR_SECTIONS, string> = {
  chat: 'modules.sidebar.sections.chat',
  console: 'shell.menu.console',
  personal: 'shell.menu.personal',
  admin: 'shell.menu.admin',
};

/** SidebarModulesAdmin: which side-menu sections and entries show for everyone. */
export function SidebarEditor() {
  const translate = useTranslate();
  const { stored, saving, submit } = useSaveOption('SidebarModulesAdmin');
  const start = useMemo(() => readSidebar(stored), [stored]);
  const [modules, setModules] = useState<SidebarModules>(start);
  useEffect(() => setModules(start), [start]);

  const turn = (section: string, entry: string, on: boolean) =>
    setModules((current) => ({ ...current, [section]: { ...current[section], [entry]: on } }));
  return (
    <EditorCard
      id="sidebar"
      title="modules.sidebar.title"
      help="modules.sidebar.help"
      saving={saving}
      onReset={() => setModules({ ...modules, ...DEFAULT_SIDEBAR })}
      onSave={() => submit(JSON.stringify(modules))}
    >
      <Grid container spacing={2}>
        {Object.entries(SIDEBAR_SECTIONS).map(([section, entries]) => {
          const sectionOn = modules[section]?.enabled !== false;
          return (
            <Grid key={section} size={{ xs: 12, sm: 6, md: 3 }}>
              <FormControlLabel
                control={
                  <Switch
                    checked={sectionOn}
                    onChange={(event) => turn(section, 'enabled', event.target.checked)}
                    slotProps={moduleSwitch(`sidebar.${section}`)}
                  />
                }
                label={<strong>{translate(SECTION_LABELS[section as keyof typeof SIDEBAR_SECTIONS])}</strong>}
              />
              {entries.map((entry) => (
                <FormControlLabel
                  key={entry}
                  sx={{ ml: 2, display: 'flex' }}
                  disabled={!sectionOn}
                  control={
                    <Switch
                      size="small"
                      checked={modules[section]?.[entry] !== false}
                      onChange={(event) => turn(section, entry, event.target.checked)}
                      slotProps={moduleSwitch(`sidebar.${section}.${entry}`)}
                    />
                  }
                  label={translate(`modules.sidebar.entries.${entry}`)}
                />
              ))}
            </Grid>
          );
        })}
      </Grid>
      <FormHelperText>{translate('modules.sidebar.setting_kept')}</FormHelperText>
    </EditorCard>
  );
}
