import ContentCopy from '@mui/icons-material/ContentCopy';
import { Alert, Box, Button, Card, CardContent, Chip, IconButton, Stack, Tooltip, Typography } from '@mui/material';
import { useEffect, useState } from 'react';
import { useTranslate } from 'react-admin';
import { Link as RouterLink } from 'react-router';
import { api } from '../../providers/http.ts';
import { useSessionUser } from '../../providers/session.ts';
import { useStatus } from '../../status/StatusContext.tsx';
import { contentKind, SiteContent } from './parts/content.tsx';
import { useCopy } from './parts/copy.tsx';
import { siteAddress } from './parts/oauth.tsx';

/** The last home content, shown at once on the next visit while the fresh copy loads. */
const HOME_CONTENT_KEY = 'home_page_content';

function cachedHomeContent(): string {
  try {
    return localStorage.getItem(HOME_CONTENT_KEY) ?? '';
  } catch {
    return '';
  }
}

/**
 * The home page (spec doc 1 §2, public): the administrator's home content (option HomePageContent: HTML,
 * Markdown, or a URL shown in a frame), else a default landing with the API address and the way in.
 * The site notice (option Notice) shows above either.
 */
export function HomePage() {
  const [content, setContent] = useState(cachedHomeContent);
  const [notice, setNotice] = useState('');
  const [loaded, setLoaded] = useState(false);

  useEffect(() => {
    api
      .get<string>('/api/home_page_content', { expireOn401: false })
      .then((text) => {
        const fresh = typeof text === 'string' ? text : '';
        setContent(fresh);
        try {
          localStorage.setItem(HOME_CONTENT_KEY, fresh);
        } catch {
          // Not cached: fetched again next time.
        }
      })
      .catch(() => {
        // The default landing (or the cached content) stays.
      })
      .finally(() => setLoaded(true));
    api
      .get<string>('/api/notice', { expireOn401: false })
      .then((text) => setNotice(typeof text === 'string' ? text.trim() : ''))
      .catch(() => {});
  }, []);

  const kind = contentKind(content);
  return (
    <Box sx={{ display: 'flex', flexDirection: 'column', flex: 1 }} data-testid="home-page" data-loaded={loaded}>
      {notice && (
        <Alert severity="info" sx={{ mb: 2 }} data-testid="home-notice">
          <SiteContent text={notice} testId="home-notice-content" />
        </Alert>
      )}
      {kind === 'empty' ? <DefaultLanding /> : <SiteContent text={content} testId="home-content" />}
    </Box>
  );
}

function DefaultLanding() {
  const translate = useTranslate();
  const { status } = useStatus();
  const user = useSessionUser();
  const { copy, dialog } = useCopy();
  const address = siteAddress(status);
  const features = [
    { title: 'home.feature_unified', text: 'home.feature_unified_text' },
    { title: 'home.feature_billing', text: 'home.feature_billing_text' },
    { title: 'home.feature_routing', text: 'home.feature_routing_text' },
  ];
  return (
    <Box data-testid="home-default" sx={{ maxWidth: 960, mx: 'auto', width: '100%', py: { xs: 2, sm: 6 } }}>
      <Stack spacing={2} sx={{ alignItems: 'center', textAlign: 'center' }}>
        <Box component="img" src={status.logo || '/logo.svg'} alt="" sx={{ width: 72, height: 72, borderRadius: 2 }} />
        <Typography variant="h3" component="h1" sx={{ fontWeight: 700, fontSize: { xs: 32, sm: 44 } }}>
          {status.system_name}
        </Typography>
        <Typography variant="h6" color="text.secondary" sx={{ maxWidth: 640 }}>
          {translate('home.tagline')}
        </Typography>
        <Stack
          direction="row"
          spacing={1}
          sx={{ alignItems: 'center', border: 1, borderColor: 'divider', borderRadius: 2, px: 2, py: 0.5 }}
        >
          <Typography variant="body2" color="text.secondary">
            {translate('home.base_url')}
          </Typography>
          <Typography variant="body2" sx={{ fontFamily: 'monospace' }} data-testid="home-address">
            {address}
          </Typography>
          <Tooltip title={translate('home.copy_address')}>
            <IconButton size="small" onClick={() => void copy(address)} aria-label={translate('home.copy_address')}>
              <ContentCopy fontSize="small" />
            </IconButton>
          </Tooltip>
        </Stack>
        <Stack direction="row" spacing={1} sx={{ flexWrap: 'wrap', justifyContent: 'center' }}>
          <Button variant="contained" component={RouterLink} to={user ? '/token' : '/login'} data-testid="home-start">
            {translate(user ? 'home.console' : 'home.get_started')}
          </Button>
          <Button variant="outlined" component={RouterLink} to="/pricing">
            {translate('home.pricing')}
          </Button>
          {status.docs_link && (
            <Button variant="text" href={status.docs_link} target="_blank" rel="noreferrer">
              {translate('home.docs')}
            </Button>
          )}
        </Stack>
        {status.version && <Chip size="small" label={status.version} variant="outlined" />}
      </Stack>
      <Box
        sx={{
          display: 'grid',
          gridTemplateColumns: { xs: '1fr', md: 'repeat(3, 1fr)' },
          gap: 2,
          mt: { xs: 4, sm: 6 },
        }}
      >
        {features.map((feature) => (
          <Card key={feature.title} variant="outlined">
            <CardContent>
              <Typography variant="subtitle1" sx={{ fontWeight: 600 }} gutterBottom>
                {translate(feature.title)}
              </Typography>
              <Typography variant="body2" color="text.secondary">
                {translate(feature.text)}
              </Typography>
            </CardContent>
          </Card>
        ))}
      </Box>
      {dialog}
    </Box>
  );
}
