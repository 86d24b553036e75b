import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { Page, Card, ErrorBox, useData, useCan } from '../ui.jsx';

// The original's wizard shells out to pg_dump | pg_restore from the broker. This broker does not (see
// docs/dashboard.md): the page lists the manual procedure, and the connection test shows the API's answer.
export function Migration() {
  const push = useData(() => api('/api/v1/system/maintenance', { quiet: true }), []);
  const pop = useData(() => api('/api/v1/system/maintenance/pop', { quiet: true }), []);
  const [target, setTarget] = useState({ host: '', port: '5432', database: '', user: '', password: '' });
  const [answer, setAnswer] = useState(null);
  const can = useCan();
  const test = async (e) => {
    e.preventDefault();
    try {
      const r = await api('/api/v1/migration/test-connection', { method: 'POST', body: target });
      setAnswer({ ok: true, text: r.message || 'Connection successful' });
    } catch (err) {
      setAnswer({ ok: false, text: err.message, status: err.status });
    }
  };
  const set = (k) => (e) => setTarget({ ...target, [k]: e.target.value });
  return (
    <Page title="Database migration">
      {/* The maintenance flags are admin-only: other roles read the procedure without an error. */}
      {push.error && push.error.status !== 401 && push.error.status !== 403 && <ErrorBox error={push.error} />}
      <Card title="Move the broker's database to another PostgreSQL">
        <ol class="steps">
          <li class={push.data && push.data.maintenanceMode ? 'done' : ''}>Turn on <b>push maintenance</b> (header switch): pushes go to each broker's disk spool.
            {push.data && <span class="muted"> Now {push.data.maintenanceMode ? 'on' : 'off'}.</span>}</li>
          <li class={pop.data && pop.data.popMaintenanceMode ? 'done' : ''}>Turn on <b>pop maintenance</b>: consumers get empty pops, no cursor moves.
            {pop.data && <span class="muted"> Now {pop.data.popMaintenanceMode ? 'on' : 'off'}.</span>}</li>
          <li>Copy the schema: <code>pg_dump -Fc -n queenmq "$SOURCE_URL" | pg_restore --no-owner -d "$TARGET_URL"</code></li>
          <li>Compare row counts of <code>messages</code>, <code>partitions</code>, <code>partition_consumers</code> and <code>dead_letters</code> on both sides.</li>
          <li>Point every broker's <code>DATABASE_URL</code> at the target and restart them one by one.</li>
          <li>Turn both maintenance switches off: the spools replay their pushes into the new database.</li>
        </ol>
      </Card>
      <Card title="Target database">
        <form class="form" onSubmit={test}>
          <div class="fields">
            <label>Host<input value={target.host} onInput={set('host')} /></label>
            <label>Port<input value={target.port} onInput={set('port')} /></label>
            <label>Database<input value={target.database} onInput={set('database')} /></label>
            <label>User<input value={target.user} onInput={set('user')} /></label>
            <label>Password<input type="password" value={target.password} onInput={set('password')} /></label>
          </div>
          <div class="modal-actions">{can('admin') ? <button class="primary" type="submit">Test connection</button> : <span class="muted">Testing a connection needs the admin role.</span>}</div>
        </form>
        {answer && <div class={'banner ' + (answer.ok ? 'info' : answer.status === 501 ? 'warn' : 'err')} data-testid="migration-answer">{answer.text}</div>}
      </Card>
    </Page>
  );
}
