import RestartAlt from '@mui/icons-material/RestartAlt';
import { Alert, Box, Button, CircularProgress, Paper, Tab, Tabs } from '@mui/material';
import { useEffect, useMemo, useState } from 'react';
import { Title, useNotify, useTranslate } from 'react-admin';
import { useSearchParams } from 'react-router';
import { api, errorMessage } from '../../providers/http.ts';
import { ROLE, useSessionUser } from '../../providers/session.ts';
import { PAGE_SX, useConfirm } from '../../resources/admin-shared.tsx';
import { AffinityCache } from './AffinityCache.tsx';
import { ConsoleTab } from './ConsoleTab.tsx';
import { CustomOAuthProviders } from './CustomOAuthProviders.tsx';
import { OptionSection } from './OptionSection.tsx';
import { OptionsProvider, useOptions } from './OptionsContext.tsx';
import type { OptionSectionDef } from './options.ts';
import { PricingEditor } from './PricingEditor.tsx';
import { readPriceMaps, unsetModels } from './pricing.ts';
import {
  CHANNEL_AFFINITY_SECTION,
  MODEL_RATIO_SECTION,
  MODEL_SECTIONS,
  OPERATION_SECTIONS,
  OTHER_SECTIONS,
  RATE_LIMIT_SECTIONS,
  SYSTEM_SECTIONS,
} from './sections.ts';
import { TieredEditor } from './TieredEditor.tsx';

/** Tabs of the settings page, chosen by ?tab= (spec doc 2 §2); operation is the default. */
const TABS = [
  { id: 'operation', label: 'settings.tabs.operation' },
  { id: 'ratelimit', label: 'settings.tabs.ratelimit' },
  { id: 'models', label: 'settings.tabs.models' },
  { id: 'system', label: 'settings.tabs.system' },
  { id: 'other', label: 'settings.tabs.other' },
  { id: 'console', label: 'settings.tabs.console' },
] as const;
type TabId = (typeof TABS)[number]['id'];

/**
 * /setting (spec doc 2 §2 "Settings page"): the option tabs. Options are the super administrator's
 * (GET/PUT /api/option/ answer only root), so an administrator sees a notice instead of the tabs.
 */
export function SettingsPage() {
  const translate = useTranslate();
  const user = useSessionUser();
  const [params, setParams] = useSearchParams();
  const requested = params.get('tab');
  const tab: TabId = TABS.some((t) => t.id === requested) ? (requested as TabId) : 'operation';
  if (!user || user.role < ROLE.root) {
    return (
      <Box data-testid="settings-page" sx={PAGE_SX}>
        <Title title="settings.title" />
        <Alert severity="info">{translate('settings.root_only')}</Alert>
      </Box>
    );
  }
  return (
    <Box data-testid="settings-page" sx={PAGE_SX}>
      <Title title="settings.title" />
      <Paper sx={{ mb: 2 }}>
        <Tabs
          value={tab}
          onChange={(_event, next: TabId) => setParams(next === 'operation' ? {} : { tab: next })}
          variant="scrollable"
        >
          {TABS.map((t) => (
            <Tab key={t.id} value={t.id} label={translate(t.label)} data-testid={`tab-${t.id}`} />
          ))}
        </Tabs>
      </Paper>
      <OptionsProvider>
        <TabBody tab={tab} />
      </OptionsProvider>
    </Box>
  );
}

function TabBody({ tab }: { tab: TabId }) {
  const { loaded } = useOptions();
  if (!loaded) return <CircularProgress />;
  switch (tab) {
    case 'ratelimit':
      return <Sections sections={RATE_LIMIT_SECTIONS} />;
    case 'models':
      return <Sections sections={MODEL_SECTIONS} />;
    case 'system':
      return (
        <>
          <Sections sections={SYSTEM_SECTIONS} />
          <CustomOAuthProviders />
        </>
      );
    case 'other':
      return <Sections sections={OTHER_SECTIONS} />;
    case 'console':
      return <ConsoleTab />;
    default:
      return (
        <>
          <Sections sections={OPERATION_SECTIONS} />
          <OptionSection section={CHANNEL_AFFINITY_SECTION} extra={<AffinityCache />} />
          <RatioTabs />
        </>
      );
  }
}

function Sections({ sections }: { sections: OptionSectionDef[] }) {
  return (
    <>
      {sections.map((section) => (
        <OptionSection key={section.id} section={section} />
      ))}
    </>
  );
}

const RATIO_TABS = [
  { id: 'model_ratio', label: 'settings.ratio_tabs.model_ratio' },
  { id: 'visual', label: 'settings.ratio_tabs.visual' },
  { id: 'unset', label: 'settings.ratio_tabs.unset' },
  { id: 'tiered', label: 'settings.ratio_tabs.tiered' },
] as const;

/** The operation tab's ratio sub-tabs: model ratio JSON, the visual editor, unset-ratio models, expressions. */
function RatioTabs() {
  const translate = useTranslate();
  const [tab, setTab] = useState<(typeof RATIO_TABS)[number]['id']>('model_ratio');
  return (
    <Paper variant="outlined" sx={{ p: 2 }} data-testid="ratio-tabs">
      <Tabs value={tab} onChange={(_event, next) => setTab(next)} sx={{ mb: 2 }}>
        {RATIO_TABS.map((t) => (
          <Tab key={t.id} value={t.id} label={translate(t.label)} data-testid={`ratio-tab-${t.id}`} />
        ))}
      </Tabs>
      {tab === 'model_ratio' && <OptionSection section={MODEL_RATIO_SECTION} extra={<ResetRatios />} />}
      {tab === 'visual' && <PricingEditor />}
      {tab === 'unset' && <UnsetModels />}
      {tab === 'tiered' && <TieredEditor />}
    </Paper>
  );
}

/** POST /api/option/rest_model_ratio: back to the default prices, after a confirmation. */
function ResetRatios() {
  const translate = useTranslate();
  const notify = useNotify();
  const { reload } = useOptions();
  const { ask, dialog } = useConfirm();
  return (
    <Box sx={{ mt: 2 }}>
      <Button
        color="error"
        variant="outlined"
        startIcon={<RestartAlt />}
        data-testid="reset-ratios"
        onClick={() =>
          ask({
            title: 'settings.confirm.reset_ratio_title',
            content: 'settings.confirm.reset_ratio',
            danger: true,
            onConfirm: async () => {
              try {
                const envelope = await api.request('POST', '/api/option/rest_model_ratio');
                notify(envelope.message, { type: 'success' });
                await reload();
              } catch (error) {
                notify(errorMessage(error), { type: 'error' });
              }
            },
          })
        }
      >
        {translate('settings.reset_ratios')}
      </Button>
      {dialog}
    </Box>
  );
}

/** Enabled models with no price (GET /api/channel/models_enabled against the price maps). */
function UnsetModels() {
  const notify = useNotify();
  const { options } = useOptions();
  const [enabled, setEnabled] = useState<string[]>();
  useEffect(() => {
    api
      .get<string[]>('/api/channel/models_enabled')
      .then((list) => setEnabled(list ?? []))
      .catch(() => {
        notify('settings.messages.enabled_models_failed', { type: 'error' });
        setEnabled([]);
      });
  }, [notify]);
  const models = useMemo(
    () => (enabled ? unsetModels(readPriceMaps(options), enabled) : undefined),
    [options, enabled],
  );
  if (!models) return <CircularProgress />;
  return <PricingEditor models={models} />;
}
