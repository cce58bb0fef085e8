import { render } from 'preact';

render(<main>Connector console</main>, document.getElementById('app') as HTMLElement);
