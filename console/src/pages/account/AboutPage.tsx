import { Box, Card, CardContent, CircularProgress, Typography } from '@mui/material';
import { useEffect, useState } from 'react';
import { useTranslate } from 'react-admin';
import { api } from '../../providers/http.ts';
import { useStatus } from '../../status/StatusContext.tsx';
import { contentKind, SiteContent } from './parts/content.tsx';

/**
 * The about page (public): the administrator's About option (HTML, Markdown, or a URL shown in a frame),
 * else a default note on where to set it.
 */
export function AboutPage() {
  const translate = useTranslate();
  const { status } = useStatus();
  const [about, setAbout] = useState<string>();

  useEffect(() => {
    api
      .get<string>('/api/about', { expireOn401: false })
      .then((text) => setAbout(typeof text === 'string' ? text : ''))
      .catch(() => setAbout(''));
  }, []);

  if (about === undefined) {
    return (
      <Box sx={{ display: 'flex', justifyContent: 'center', py: 6 }}>
        <CircularProgress />
      </Box>
    );
  }
  if (contentKind(about) !== 'empty') {
    return (
      <Box data-testid="about-page" sx={{ display: 'flex', flexDirection: 'column', flex: 1 }}>
        <SiteContent text={about} testId="about-content" />
      </Box>
    );
  }
  return (
    <Box data-testid="about-page" sx={{ maxWidth: 720, mx: 'auto', width: '100%', py: { xs: 2, sm: 4 } }}>
      <Card data-testid="about-default">
        <CardContent>
          <Typography variant="h5" component="h1" gutterBottom>
            {translate('about.title', { name: status.system_name })}
          </Typography>
          <Typography sx={{ mb: 2 }}>{translate('about.default')}</Typography>
          <Typography variant="body2" color="text.secondary">
            {translate('about.admin_hint')}
          </Typography>
          {status.version && (
            <Typography variant="body2" color="text.secondary" sx={{ mt: 1 }}>
              {translate('about.version', { version: status.version })}
            </Typography>
          )}
        </CardContent>
      </Card>
    </Box>
  );
}
