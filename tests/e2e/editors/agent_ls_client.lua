-- What the Neovim 0.7+ e2e scripts beside this file share (problems_e2e.lua, review_findings_e2e.lua):
-- waiting, a synchronous request, and a real `agent-ls serve` started and attached to a buffer. Load it with
--
--   local lib = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/agent_ls_client.lua")
--
-- Inputs (environment): AGENT_LS_E2E_PYTHON, AGENT_LS_E2E_ROOT, AGENT_LS_E2E_BASE_URL as for agent_ls_e2e.lua.

local M = {}

-- Waits up to `ms` milliseconds for `predicate`; raises naming `what` when it does not hold by then.
function M.wait(what, ms, predicate)
  if not vim.wait(ms, predicate, 20) then
    error("timed out after " .. ms .. " ms waiting for " .. what)
  end
end

-- Sends `method` and waits up to 20 s for its result (vim.NIL for null); raises with the error it got.
function M.request(client, bufnr, method, params)
  local response = nil
  client.request(method, params, function(err, res)
    response = err and { error = vim.inspect(err) } or { result = res or vim.NIL }
  end, bufnr)
  M.wait(method, 20000, function() return response ~= nil end)
  if response.error then
    error(method .. " failed: " .. response.error)
  end
  return response.result
end

-- Starts `agent-ls serve` on the scripted model server, attaches it to `bufnr` and waits up to 20 s for
-- initialize; `on_run_ended(params)` gets each agent/runEnded. Returns the client id and the client.
function M.start(bufnr, on_run_ended)
  local env = vim.env
  local client_id = vim.lsp.start_client({
    name = "agent-ls",
    cmd = { env.AGENT_LS_E2E_PYTHON, "-m", "agent_ls", "serve" },
    root_dir = env.AGENT_LS_E2E_ROOT,
    init_options = { agentLs = { model = "openai/test-model", baseUrl = env.AGENT_LS_E2E_BASE_URL } },
    handlers = {
      ["window/showMessageRequest"] = function() return vim.NIL end,
      ["window/logMessage"] = function() end,
      ["agent/event"] = function() end,
      ["agent/runEnded"] = function(_, params) on_run_ended(params) end,
    },
  })
  assert(client_id, "vim.lsp.start_client failed")
  assert(vim.lsp.buf_attach_client(bufnr, client_id), "buf_attach_client failed")
  local client = vim.lsp.get_client_by_id(client_id)
  M.wait("initialize", 20000, function() return client.initialized end)
  return client_id, client
end

return M
