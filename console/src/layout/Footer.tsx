import { Box } from '@mui/material';
import { useTranslate } from 'react-admin';
import { useStatus } from '../status/StatusContext.tsx';

const footerSx = { px: 2, py: 1.5, textAlign: 'center', color: 'text.secondary', fontSize: 13 } as const;

/**
 * The footer (spec doc 1 §2): the administrator's footer HTML when set, else a credit line with the
 * version. It reads the status context, so it shows the status as soon as it is loaded (the original's
 * five refreshes at 200 ms waited for the same thing).
 */
export function Footer() {
  const translate = useTranslate();
  const { status } = useStatus();
  if (status.footer_html) {
    return (
      <Box
        component="footer"
        data-testid="footer"
        sx={footerSx}
        // biome-ignore lint/security/noDangerouslySetInnerHtml: the administrator's own footer markup (option Footer)
        dangerouslySetInnerHTML={{ __html: status.footer_html }}
      />
    );
  }
  return (
    <Box component="footer" data-testid="footer" sx={footerSx}>
      {translate('shell.footer.credit', { name: status.system_name, version: status.version })}
    </Box>
  );
}
