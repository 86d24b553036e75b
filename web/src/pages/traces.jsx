import { useState } from 'preact/hooks';
import { api, paths } from '../api.js';
import { Page, Card, ErrorBox, useData, useLocation, time, short, Modal, Json, Empty, num } from '../ui.jsx';

const PAGE = 50;

export function Traces() {
  const { query } = useLocation();
  const [name, setName] = useState(query.get('name') || '');
  const [input, setInput] = useState(name);
  const [page, setPage] = useState(0);
  const [open, setOpen] = useState(null);
  const names = useData(() => api('/api/v1/traces/names', { query: { limit: 20 } }), []);
  const list = useData(() => (name ? api(paths.tracesByName(name), { query: { limit: PAGE, offset: page * PAGE } }) : Promise.resolve(null)), [name, page]);
  const search = (n) => { setName(n); setInput(n); setPage(0); };
  const rows = (list.data && list.data.traces) || [];
  const total = (list.data && list.data.total) || 0;
  return (
    <Page title="Traces">
      <form class="row" onSubmit={(e) => { e.preventDefault(); search(input.trim()); }}>
        <input type="search" placeholder="trace name, e.g. order-42" value={input} onInput={(e) => setInput(e.target.value)} aria-label="Trace name" data-testid="trace-input" />
        <button class="primary" type="submit">Search</button>
      </form>
      <div class="chips">
        {((names.data && names.data.trace_names) || []).map((n) => (
          <button class="chip" onClick={() => search(n.trace_name)} data-testid="trace-chip">{n.trace_name} <span class="muted">{num(n.trace_count)}</span></button>
        ))}
      </div>
      <ErrorBox error={list.error || names.error} />
      {!name ? <Empty>Pick a trace name to follow a business flow across queues.</Empty> : rows.length === 0 && list.data ? <Empty>No events carry “{name}”.</Empty> : (
        <Card title={`${num(total)} events for “${name}”`}>
          <div class="scroll"><table class="table hover" data-testid="traces">
            <thead><tr><th>Event</th><th>Time</th><th>Queue</th><th>Partition</th><th>Transaction</th><th>Data</th><th>Group / worker</th></tr></thead>
            <tbody>{rows.map((t) => (
              <tr class="click" onClick={() => setOpen(t)}>
                <td>{t.event_type}</td><td>{time(t.created_at)}</td><td>{t.queue_name}</td><td>{t.partition_name}</td>
                <td class="mono">{short(t.transaction_id, 14)}</td>
                <td>{t.data && t.data.text ? t.data.text : short(JSON.stringify(t.data), 40)}</td>
                <td>{[t.consumer_group, t.worker_id].filter(Boolean).join(' / ') || '—'}</td></tr>
            ))}</tbody>
          </table></div>
          <div class="row pager">
            <button class="small" disabled={page === 0} onClick={() => setPage(page - 1)}>← Previous</button>
            <span class="muted">{page * PAGE + 1}–{Math.min(total, (page + 1) * PAGE)} of {num(total)}</span>
            <button class="small" disabled={(page + 1) * PAGE >= total} onClick={() => setPage(page + 1)}>Next →</button>
          </div>
        </Card>
      )}
      {open && (
        <Modal title={open.event_type + ' · ' + time(open.created_at)} onClose={() => setOpen(null)} wide>
          <dl class="kv"><dt>Queue</dt><dd>{open.queue_name} / {open.partition_name}</dd><dt>Transaction</dt><dd class="mono">{open.transaction_id}</dd>
            <dt>Names</dt><dd>{(open.trace_names || []).join(', ')}</dd></dl>
          <h3>Data</h3><Json value={open.data} />
          {open.message_payload !== undefined && <><h3>Message payload</h3><Json value={open.message_payload} /></>}
        </Modal>
      )}
    </Page>
  );
}
