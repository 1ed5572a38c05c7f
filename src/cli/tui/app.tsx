/** The TUI session: one view at a time; from the dashboard, keys open the other views and Esc comes back. */
import { useApp } from 'ink';
import { useEffect, useState, type ReactNode } from 'react';
import { Dashboard } from './dashboard.js';
import { DashboardModel } from './dashboard-model.js';
import { InspectView } from './inspect.js';
import { LogsView } from './logs.js';
import type { TuiSource } from './source.js';
import type { RequestFilter } from './state.js';
import { KeyRouter, useTerminalSize, type Size } from './ui.js';
import { UsageView } from './usage.js';

export type ViewName = 'dashboard' | 'logs' | 'usage' | 'inspect';

export interface AppProps {
  source: TuiSource;
  view: ViewName;
  filter?: RequestFilter;
  /** Fixed size (tests); otherwise the terminal's, following resizes. */
  size?: Size;
}

function Sized({ size, children }: { size?: Size; children: (s: Size) => ReactNode }) {
  const live = useTerminalSize();
  return <>{children(size ?? live)}</>;
}

export function App({ source, view: first, filter, size }: AppProps) {
  const { exit } = useApp();
  const [view, setView] = useState<ViewName>(first);
  const fromDashboard = first === 'dashboard';
  // One dashboard model per session: it keeps counting while another view is on the screen.
  const [model] = useState(() => (fromDashboard ? new DashboardModel(source) : undefined));
  useEffect(() => () => model?.dispose(), [model]);
  const back = fromDashboard ? () => setView('dashboard') : undefined;
  const quit = () => exit();
  return (
    <KeyRouter>
      <Sized size={size}>
        {({ width, height }) => {
          switch (view) {
            case 'dashboard':
              return <Dashboard source={source} model={model} width={width} height={height} onOpen={setView} onQuit={quit} />;
            case 'logs':
              return <LogsView source={source} width={width} height={height} initialFilter={filter} onBack={back} onQuit={quit} />;
            case 'usage':
              return <UsageView source={source} width={width} height={height} onBack={back} onQuit={quit} />;
            case 'inspect':
              return <InspectView source={source} width={width} height={height} onBack={back} onQuit={quit} />;
          }
        }}
      </Sized>
    </KeyRouter>
  );
}
