-- agent-ls end to end in a real Neovim 0.7+ (headless), driven by tests/e2e/editors/test_neovim.py.
--
--   timeout 60 nvim --headless -u NONE -i NONE -c "luafile tests/e2e/editors/agent_ls_e2e.lua"
--
-- Inputs (environment): AGENT_LS_E2E_PYTHON (the interpreter that runs `-m agent_ls serve`),
-- AGENT_LS_E2E_ROOT (workspace), AGENT_LS_E2E_FILE (the file to open), AGENT_LS_E2E_BASE_URL (the
-- fake model server), AGENT_LS_E2E_TASK, AGENT_LS_E2E_MARKER (a line typed at the top, unsaved),
-- AGENT_LS_E2E_PERMISSION (the answer to the permission question), AGENT_LS_E2E_APPLY (the answer to
-- "Apply N file(s)?": Apply or Discard), AGENT_LS_E2E_RESULT (where the JSON result is written),
-- AGENT_LS_E2E_SUBSET (optional: a file URI; then only that file is applied, and the files left are
-- discarded by URI: agent.applyProposal and agent.discardProposal with `files`).
--
-- The flow uses only Neovim 0.7's API (vim.lsp.start_client; vim.lsp.start is 0.8+). It overrides
-- the handlers a headless editor cannot show (showMessageRequest uses inputlist) and records what
-- the server sent; edits go through Neovim's own workspace/applyEdit handler, which applies
-- without a preview.

local env = vim.env
local result = {
  editor = "neovim " .. tostring(vim.version().major) .. "." .. tostring(vim.version().minor)
    .. "." .. tostring(vim.version().patch),
  progress = {}, -- {token, kind, title?, message?} of every $/progress
  questions = {}, -- {message, actions, answer} of every window/showMessageRequest
  log = {}, -- window/logMessage lines
  run_ended = vim.NIL,
  started = vim.NIL,
  apply = vim.NIL, -- the agent.applyProposal response: {result = ...} or {error = ...}
  proposal_between = vim.NIL, -- with AGENT_LS_E2E_SUBSET: agent.proposal after applying that file
  discard = vim.NIL, -- with AGENT_LS_E2E_SUBSET: agent.discardProposal of the files left, by URI
  apply_edits = {}, -- the workspace/applyEdit params the server sent
  proposal_after = vim.NIL, -- the agent.proposal response after applying or discarding
  empty_table = vim.NIL, -- responses to commands given an empty Lua table (sent as [])
  buffer = vim.NIL, -- the buffer text at the end (unsaved)
  modified = vim.NIL,
  capabilities = vim.NIL, -- what this editor declared (for the report)
  error = vim.NIL,
}

local function write_result()
  local file = assert(io.open(env.AGENT_LS_E2E_RESULT, "w"))
  file:write(vim.fn.json_encode(result))
  file:close()
end

local function wait(what, ms, predicate)
  if not vim.wait(ms, predicate, 20) then
    error("timed out after " .. ms .. " ms waiting for " .. what)
  end
end

-- A synchronous executeCommand: {result = ...} or {error = "..."} (as the Emacs script records it).
local function command(client, bufnr, name, argument)
  local response = nil
  client.request("workspace/executeCommand", { command = name, arguments = { argument } },
    function(err, res)
      response = err and { error = vim.inspect(err) } or { result = res }
    end, bufnr)
  wait(name, 20000, function() return response ~= nil end)
  return response
end

local function execute(client, bufnr, name, argument)
  local response = command(client, bufnr, name, argument)
  if response.error then
    error(name .. " failed: " .. response.error)
  end
  return response.result
end

local function buffer_text(bufnr)
  return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n") .. "\n"
end

local function main()
  vim.lsp.set_log_level("debug") -- $XDG_CACHE_HOME/nvim/lsp.log, printed by the test on failure
  vim.cmd("edit " .. vim.fn.fnameescape(env.AGENT_LS_E2E_FILE))
  local bufnr = vim.api.nvim_get_current_buf()
  local uri = vim.uri_from_bufnr(bufnr)
  local handlers = {
    ["$/progress"] = function(err, params, ctx, config)
      local value = params.value
      table.insert(result.progress,
        { token = params.token, kind = value.kind, title = value.title, message = value.message })
      return vim.lsp.handlers["$/progress"](err, params, ctx, config)
    end,
    ["window/showMessageRequest"] = function(_, params)
      local answer = env.AGENT_LS_E2E_PERMISSION
      if vim.startswith(params.message, "Apply ") then
        answer = env.AGENT_LS_E2E_APPLY
      end
      local titles = {}
      for _, action in ipairs(params.actions or {}) do
        table.insert(titles, action.title)
      end
      table.insert(result.questions, { message = params.message, actions = titles, answer = answer })
      for _, action in ipairs(params.actions or {}) do
        if action.title == answer then
          return action
        end
      end
      return vim.NIL
    end,
    ["window/logMessage"] = function(_, params)
      table.insert(result.log, params.message)
    end,
    ["workspace/applyEdit"] = function(err, params, ctx, config)
      table.insert(result.apply_edits, vim.deepcopy(params)) -- the default handler annotates params
      return vim.lsp.handlers["workspace/applyEdit"](err, params, ctx, config)
    end,
    ["agent/runEnded"] = function(_, params)
      result.run_ended = params
    end,
    ["agent/event"] = function() end,
  }

  local exited = nil
  local client_id = vim.lsp.start_client({
    name = "agent-ls",
    cmd = { env.AGENT_LS_E2E_PYTHON, "-m", "agent_ls", "serve" },
    root_dir = env.AGENT_LS_E2E_ROOT,
    init_options = { agentLs = { model = "openai/test-model", baseUrl = env.AGENT_LS_E2E_BASE_URL } },
    handlers = handlers,
    on_exit = function(code, signal) exited = { code = code, signal = signal } end,
  })
  assert(client_id, "vim.lsp.start_client failed")
  assert(vim.lsp.buf_attach_client(bufnr, client_id), "buf_attach_client failed")
  local client = vim.lsp.get_client_by_id(client_id)
  wait("initialize", 20000, function() return client.initialized or exited ~= nil end)
  assert(client.initialized, "agent-ls exited before initialize: " .. vim.inspect(exited) .. " (see lsp.log)")
  result.capabilities = vim.lsp.protocol.make_client_capabilities()

  -- An unsaved change: a line typed at the top. Neovim sends it as didChange (flushed before requests).
  vim.api.nvim_buf_set_lines(bufnr, 0, 0, false, { env.AGENT_LS_E2E_MARKER })

  local started = execute(client, bufnr, "agent.run", { task = env.AGENT_LS_E2E_TASK, uri = uri })
  result.started = started
  local session_id = started.sessionId
  wait("agent/runEnded", 30000, function()
    return result.run_ended ~= vim.NIL and result.run_ended.sessionId == session_id
  end)

  local subset = env.AGENT_LS_E2E_SUBSET
  if subset ~= nil and subset ~= "" then
    result.apply = command(client, bufnr, "agent.applyProposal", { sessionId = session_id, files = { subset } })
    result.proposal_between = command(client, bufnr, "agent.proposal", { sessionId = session_id })
    local rest = {}
    for _, file in ipairs(result.proposal_between.result.files) do
      table.insert(rest, file.uri)
    end
    result.discard = command(client, bufnr, "agent.discardProposal", { sessionId = session_id, files = rest })
  else
    result.apply = command(client, bufnr, "agent.applyProposal", { sessionId = session_id })
  end
  result.proposal_after = command(client, bufnr, "agent.proposal", { sessionId = session_id })
  -- An empty Lua table goes on the wire as [] (issue 12.14): it means "the latest session".
  result.empty_table = {
    proposal = command(client, bufnr, "agent.proposal", {}),
    cancel = command(client, bufnr, "agent.cancel", {}),
    applyProposal = command(client, bufnr, "agent.applyProposal", {}),
  }
  result.buffer = buffer_text(bufnr)
  result.modified = vim.api.nvim_buf_get_option(bufnr, "modified")

  vim.lsp.stop_client(client_id)
  vim.wait(3000, function() return vim.lsp.client_is_stopped(client_id) end, 20)
end

local ok, err = xpcall(main, debug.traceback)
if not ok then
  result.error = tostring(err)
end
write_result()
vim.cmd("qa!")
