import { Box, Button, Typography } from '@mui/material';
import { useTranslate } from 'react-admin';
import { Link as RouterLink } from 'react-router';

/** Any other path (spec doc 1 §2): the page does not exist, check your browser address. */
export function NotFound() {
  const translate = useTranslate();
  return (
    <Box data-testid="not-found" sx={{ textAlign: 'center', py: 8, px: 2 }}>
      <Typography variant="h2" color="text.secondary" gutterBottom>
        {translate('shell.not_found.title')}
      </Typography>
      <Typography variant="body1" gutterBottom>
        {translate('shell.not_found.message')}
      </Typography>
      <Button component={RouterLink} to="/" variant="outlined" sx={{ mt: 2 }}>
        {translate('shell.not_found.home')}
      </Button>
    </Box>
  );
}
