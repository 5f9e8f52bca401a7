import { Button, Dialog, DialogActions, DialogContent, Link } from '@mui/material';
import { useEffect, useState } from 'react';
import { useNotify, useTranslate } from 'react-admin';
import { gatewayHeaders } from '../../providers/http.ts';

/**
 * A finished video task's video, played from the gateway's own content route with the console session
 * (the route serves the owner only; a vendor's address may need the channel's key or have expired).
 */
export function VideoResult({ taskId }: { taskId: string }) {
  const translate = useTranslate();
  const notify = useNotify();
  const [source, setSource] = useState<string | undefined>();
  const [loading, setLoading] = useState(false);
  useEffect(() => () => (source ? URL.revokeObjectURL(source) : undefined), [source]);

  const play = async () => {
    setLoading(true);
    try {
      const response = await fetch(`/v1/videos/${encodeURIComponent(taskId)}/content`, {
        headers: gatewayHeaders(),
        credentials: 'same-origin',
      });
      if (!response.ok) throw new Error(String(response.status));
      setSource(URL.createObjectURL(await response.blob()));
    } catch {
      notify('task.video_unavailable', { type: 'error' });
    } finally {
      setLoading(false);
    }
  };

  return (
    <>
      <Link component="button" type="button" onClick={play} disabled={loading} data-testid="task-video">
        {translate('task.play_video')}
      </Link>
      <Dialog open={source !== undefined} onClose={() => setSource(undefined)} fullWidth maxWidth="md">
        <DialogContent>
          {/* biome-ignore lint/a11y/useMediaCaption: generated videos come without captions */}
          <video src={source} controls autoPlay style={{ width: '100%' }} data-testid="task-video-player" />
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setSource(undefined)}>{translate('common.close')}</Button>
        </DialogActions>
      </Dialog>
    </>
  );
}
