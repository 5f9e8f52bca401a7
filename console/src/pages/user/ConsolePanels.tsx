import ContentCopy from '@mui/icons-material/ContentCopy';
import ExpandMore from '@mui/icons-material/ExpandMore';
import OpenInNew from '@mui/icons-material/OpenInNew';
import {
  Accordion,
  AccordionDetails,
  AccordionSummary,
  Avatar,
  Box,
  Card,
  CardContent,
  IconButton,
  Stack,
  Tooltip,
  Typography,
} from '@mui/material';
import { type ReactNode, useMemo } from 'react';
import { useTranslate } from 'react-admin';
import { formatDateTime } from '../../format/time.ts';
import {
  ANNOUNCEMENT_TYPES,
  API_INFO_COLORS,
  type ContentEntry,
  latestAnnouncements,
  panelEntries,
} from '../../status/console-content.ts';
import { useStatus } from '../../status/StatusContext.tsx';
import { markdownToHtml } from '../account/parts/content.tsx';
import { useClipboard } from './clipboard.tsx';

const text = (entry: ContentEntry, field: string) => String(entry[field] ?? '');

/**
 * The dashboard's panels the administrator fills in the settings (console tab): API addresses,
 * announcements and questions and answers, each when switched on and not empty.
 */
export function ConsolePanels() {
  const { status } = useStatus();
  const apiInfo = panelEntries(status, 'api_info');
  const announcements = panelEntries(status, 'announcements');
  const faq = panelEntries(status, 'faq');
  if (!apiInfo && !announcements && !faq) return null;
  return (
    <Stack direction={{ xs: 'column', md: 'row' }} spacing={2} sx={{ mb: 2, alignItems: 'stretch' }}>
      {apiInfo && <ApiInfoPanel entries={apiInfo} />}
      {announcements && <AnnouncementsPanel entries={announcements} />}
      {faq && <FaqPanel entries={faq} />}
    </Stack>
  );
}

function Panel({ title, testId, children }: { title: string; testId: string; children: ReactNode }) {
  return (
    <Card sx={{ flex: 1, minWidth: 0 }} data-testid={testId}>
      <CardContent>
        <Typography variant="subtitle1" gutterBottom>
          {title}
        </Typography>
        <Box sx={{ maxHeight: 384, overflow: 'auto' }}>{children}</Box>
      </CardContent>
    </Card>
  );
}

/**
 * The administrator's Markdown, made safe: markdownToHtml escapes every character of the text before it
 * adds its own tags, and lets links go only to web, mail and site addresses.
 */
function Markdown({ source }: { source: string }) {
  const html = useMemo(() => markdownToHtml(source), [source]);
  return (
    <Box
      sx={{
        '& p': { my: 0.5 },
        '& a': { color: 'primary.main' },
        '& img': { maxWidth: '100%' },
        wordBreak: 'break-word',
      }}
      // biome-ignore lint/security/noDangerouslySetInnerHtml: markdownToHtml escapes the text first (see above)
      dangerouslySetInnerHTML={{ __html: html }}
    />
  );
}

function ApiInfoPanel({ entries }: { entries: ContentEntry[] }) {
  const translate = useTranslate();
  const { copy, dialog } = useClipboard();
  return (
    <Panel title={translate('modules.panels.api_info')} testId="panel-api-info">
      <Stack spacing={1.5}>
        {entries.map((entry, index) => {
          const url = text(entry, 'url');
          const route = text(entry, 'route');
          return (
            <Box key={String(entry.id ?? index)} sx={{ display: 'flex', gap: 1.5 }} data-api-route={route}>
              <Avatar sx={{ width: 28, height: 28, fontSize: 12, bgcolor: API_INFO_COLORS[text(entry, 'color')] }}>
                {route.slice(0, 2)}
              </Avatar>
              <Box sx={{ minWidth: 0, flex: 1 }}>
                <Typography variant="body2" sx={{ fontWeight: 600 }}>
                  {route}
                </Typography>
                <Box sx={{ display: 'flex', alignItems: 'center', gap: 0.5 }}>
                  <Typography variant="body2" color="primary" noWrap sx={{ fontFamily: 'monospace' }}>
                    {url}
                  </Typography>
                  <Tooltip title={translate('modules.panels.copy')}>
                    <IconButton size="small" aria-label={translate('modules.panels.copy')} onClick={() => copy(url)}>
                      <ContentCopy fontSize="inherit" />
                    </IconButton>
                  </Tooltip>
                  <Tooltip title={translate('modules.panels.open')}>
                    <IconButton
                      size="small"
                      aria-label={translate('modules.panels.open')}
                      component="a"
                      href={url}
                      target="_blank"
                      rel="noopener noreferrer"
                    >
                      <OpenInNew fontSize="inherit" />
                    </IconButton>
                  </Tooltip>
                </Box>
                <Typography variant="caption" color="text.secondary">
                  {text(entry, 'description')}
                </Typography>
              </Box>
            </Box>
          );
        })}
      </Stack>
      {dialog}
    </Panel>
  );
}

function AnnouncementsPanel({ entries }: { entries: ContentEntry[] }) {
  const translate = useTranslate();
  const latest = useMemo(() => latestAnnouncements(entries), [entries]);
  return (
    <Panel title={translate('modules.panels.announcements')} testId="panel-announcements">
      <Stack spacing={1.5}>
        {latest.map((entry, index) => (
          <Box key={String(entry.id ?? index)} sx={{ display: 'flex', gap: 1 }} data-announcement={index}>
            <Box
              sx={{
                width: 10,
                height: 10,
                borderRadius: '50%',
                mt: 0.75,
                flex: 'none',
                bgcolor: ANNOUNCEMENT_TYPES[text(entry, 'type')] ?? ANNOUNCEMENT_TYPES.default,
              }}
            />
            <Box sx={{ minWidth: 0, flex: 1 }}>
              <Markdown source={text(entry, 'content')} />
              <Typography variant="caption" color="text.secondary">
                {formatDateTime(new Date(text(entry, 'publishDate')))}
              </Typography>
              {text(entry, 'extra') && (
                <Box sx={{ color: 'text.secondary', fontSize: 12 }}>
                  <Markdown source={text(entry, 'extra')} />
                </Box>
              )}
            </Box>
          </Box>
        ))}
      </Stack>
    </Panel>
  );
}

function FaqPanel({ entries }: { entries: ContentEntry[] }) {
  const translate = useTranslate();
  return (
    <Panel title={translate('modules.panels.faq')} testId="panel-faq">
      {entries.map((entry, index) => (
        <Accordion key={String(entry.id ?? index)} disableGutters variant="outlined">
          <AccordionSummary expandIcon={<ExpandMore />}>
            <Typography variant="body2">{text(entry, 'question')}</Typography>
          </AccordionSummary>
          <AccordionDetails>
            <Markdown source={text(entry, 'answer')} />
          </AccordionDetails>
        </Accordion>
      ))}
    </Panel>
  );
}
