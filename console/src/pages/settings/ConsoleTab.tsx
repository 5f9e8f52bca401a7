import { CONTENT_KINDS } from '../../status/console-content.ts';
import { ContentListEditor } from './ContentListEditor.tsx';
import { HeaderNavEditor, SidebarEditor } from './NavModulesEditors.tsx';
import { OptionSection } from './OptionSection.tsx';
import { UPTIME_SECTION } from './sections.ts';

/** The settings' console tab: top bar, side menu, and the dashboard's API addresses, announcements, FAQ and service status. */
export function ConsoleTab() {
  return (
    <>
      <HeaderNavEditor />
      <SidebarEditor />
      {CONTENT_KINDS.map((kind) => (
        <ContentListEditor key={kind} kind={kind} />
      ))}
      <OptionSection section={UPTIME_SECTION} />
    </>
  );
}
