import { useState } from 'preact/hooks';
import { api, paths } from '../api.js';
import { useCan, Page, ErrorBox, useData, useLocation, num, time, short, Confirm, Modal, Json, Badge, Empty, groupName } from '../ui.jsx';

const STATUS_TONE = { pending: '', processing: 'info', completed: 'ok', dead_letter: 'bad' };

export function Messages() {
  const { query } = useLocation();
  const [f, setF] = useState({ queue: query.get('queue') || '', partition: query.get('partition') || '', status: query.get('status') || '', limit: 100 });
  const [page, setPage] = useState(0);
  const [text, setText] = useState('');
  const [open, setOpen] = useState(null);
  const queues = useData(() => api('/api/v1/resources/queues'), []);
  const list = useData(() => api('/api/v1/messages', { query: { ...f, offset: page * f.limit } }), [f.queue, f.partition, f.status, f.limit, page]);
  const set = (k) => (e) => { setPage(0); setF({ ...f, [k]: e.target.value }); };
  const rows = ((list.data && list.data.messages) || []).filter((m) => !text || (m.transactionId + ' ' + m.partition + ' ' + m.partitionId).includes(text));
  return (
    <Page title="Messages">
      <div class="filters">
        <select value={f.queue} onChange={set('queue')} aria-label="Queue" data-testid="msg-queue">
          <option value="">all queues</option>
          {((queues.data && queues.data.queues) || []).map((q) => <option value={q.name}>{q.name}</option>)}
        </select>
        <input placeholder="partition" value={f.partition} onChange={set('partition')} aria-label="Partition" />
        <select value={f.status} onChange={set('status')} aria-label="Status">
          <option value="">any status</option>{['pending', 'processing', 'completed', 'dead_letter'].map((s) => <option>{s}</option>)}
        </select>
        <select value={f.limit} onChange={set('limit')} aria-label="Page size">{[50, 100, 200, 500].map((n) => <option value={n}>{n} / page</option>)}</select>
        <input type="search" placeholder="find transaction or partition id" value={text} onInput={(e) => setText(e.target.value)} aria-label="Find" />
      </div>
      <ErrorBox error={list.error} />
      {list.data && rows.length === 0 ? <Empty>No messages match.</Empty> : (
        <div class="scroll"><table class="table hover" data-testid="messages">
          <thead><tr><th>Queue</th><th>Partition</th><th>Transaction</th><th>Created</th><th>Status</th></tr></thead>
          <tbody>{rows.map((m) => (
            <tr onClick={() => setOpen(m)} class="click" data-testid="message-row">
              <td>{m.queue}</td><td>{m.partition}</td><td class="mono">{short(m.transactionId, 18)}</td><td>{time(m.createdAt)}</td>
              <td><Badge tone={STATUS_TONE[m.status]}>{m.status}</Badge></td></tr>
          ))}</tbody>
        </table></div>
      )}
      <div class="row pager">
        <button class="small" disabled={page === 0} onClick={() => setPage(page - 1)}>← Newer</button>
        <span class="muted">page {page + 1}</span>
        <button class="small" disabled={!list.data || (list.data.messages || []).length < f.limit} onClick={() => setPage(page + 1)}>Older →</button>
      </div>
      {open && <Detail m={open} onClose={(changed) => { setOpen(null); if (changed) list.reload(); }} />}
    </Page>
  );
}

function Detail({ m, onClose }) {
  const d = useData(() => api(paths.message(m.partitionId, m.transactionId)), [m.partitionId, m.transactionId]);
  const [del, setDel] = useState(false);
  const can = useCan();
  const x = d.data;
  return (
    <Modal title={'Message ' + short(m.transactionId, 24)} onClose={() => onClose(false)} wide>
      <ErrorBox error={d.error} />
      {x && (
        <div data-testid="message-detail">
          <dl class="kv">
            <dt>Queue</dt><dd>{x.queue} / {x.partition}</dd>
            <dt>Transaction</dt><dd class="mono">{x.transactionId}</dd>
            <dt>Partition id</dt><dd class="mono">{x.partitionId}</dd>
            <dt>Status</dt><dd>{x.status}</dd>
            <dt>Created</dt><dd>{time(x.createdAt)}</dd>
            <dt>Retries</dt><dd>{num(x.retryCount || 0)}</dd>
            {x.errorMessage && <><dt>Error</dt><dd>{x.errorMessage}</dd></>}
            {x.traceId && <><dt>Trace</dt><dd class="mono">{x.traceId}</dd></>}
            {x.queueConfig && <><dt>Queue config</dt><dd>lease {x.queueConfig.leaseTime}s · retries {x.queueConfig.retryLimit} · delay {x.queueConfig.retryDelay}ms · ttl {x.queueConfig.ttl}s</dd></>}
            {x.consumerGroups && x.consumerGroups.length > 0 && <><dt>Groups</dt><dd>{x.consumerGroups.map((g) => `${groupName(g.name)}: ${g.consumed ? 'consumed' : 'pending'}`).join(', ')}</dd></>}
          </dl>
          <h3>Payload</h3>
          <Json value={x.payload} />
          <div class="modal-actions">
            <button class="ghost" onClick={() => navigator.clipboard && navigator.clipboard.writeText(JSON.stringify(x.payload, null, 2))}>Copy payload</button>
            {can('admin') && <button class="danger" onClick={() => setDel(true)} data-testid="message-delete">Delete message</button>}
          </div>
        </div>
      )}
      {del && <Confirm title="Delete message" confirmLabel="Delete" run={() => api(paths.message(m.partitionId, m.transactionId), { method: 'DELETE' })}
        onClose={(ok) => { setDel(false); if (ok) onClose(true); }}>The message is deleted from its partition for every consumer group.</Confirm>}
    </Modal>
  );
}
