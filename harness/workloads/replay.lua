-- The replay's compiled client (workload kind replay, client: sysbench): sysbench's
-- threads execute the statements the harness split out of a captured log, one file per
-- thread, each statement one sysbench event, and tally them per digest as the Python
-- client does (count, rows, time, errors by code, 2% latency buckets).
--
-- A thread's file holds records, each a header line and, where it says, a body:
--   C <session> <n>\n<db>\n   open the session's connection, in database db (n = 0: none)
--   Q <session> <digest> <n>\n<sql>\n   run a statement of that digest (its number)
--   U <session> <n>\n<db>\n   the session moves to db (a captured Init DB)
--   X <session>\n             the session quits
-- At the end each thread writes <dir>/stats-<thread>.txt:
--   d <digest> <count> <rows> <total_ms>   b <digest> <bucket> <n>   e <digest> <errno> <n>
--   s <why>|<n>   (skipped: sessions whose database was missing)   c <session>

local ffi = require("ffi")

ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } replay_timespec;
int clock_gettime(int clk_id, replay_timespec *tp);
]]

sysbench.cmdline.options = {
   replay_dir = {"Folder of the split log (client-N.bin) and of the tallies", ""},
   replay_warmup = {"Seconds at the start that are run but not tallied", 0},
   replay_read_only = {"Every session READ ONLY", false},
}

local BUCKET = math.log(1.02)
local ts = ffi.new("replay_timespec")

local function now_ms()
   ffi.C.clock_gettime(1, ts)  -- CLOCK_MONOTONIC
   return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end

function event()  -- sysbench requires one; thread_run below does the work
end

local function tally_new()
   return {digests = {}, skipped = {}, sessions = {}}
end

local function add(tally, d, ms, rows, errno)
   local s = tally.digests[d]
   if s == nil then
      s = {count = 0, rows = 0, total = 0, buckets = {}, errors = {}}
      tally.digests[d] = s
   end
   s.count = s.count + 1
   s.rows = s.rows + rows
   s.total = s.total + ms
   local b = math.floor(math.log(math.max(ms, 1e-4) / 1e-4) / BUCKET)
   s.buckets[b] = (s.buckets[b] or 0) + 1
   if errno ~= nil then
      s.errors[errno] = (s.errors[errno] or 0) + 1
   end
end

local function use(con, db)
   return pcall(con.query, con, "USE `" .. db:gsub("`", "``") .. "`")
end

local function connect(drv, tally, db)
   local con = drv:connect()
   if db ~= "" and not use(con, db) then
      local why = "sessions in database " .. db .. ", which is not on the server (they " ..
         "ran in the scenario's database)"
      tally.skipped[why] = (tally.skipped[why] or 0) + 1
   end
   if sysbench.opt.replay_read_only then
      -- the guard read the statements as UTF-8: the session reads them so too
      con:query("SET NAMES utf8mb4")
      con:query("SET SESSION TRANSACTION READ ONLY")
   end
   return con
end

local function run_statement(con, sql)
   local ok, rs = pcall(con.query, con, sql)
   if not ok then
      local errno = tonumber(con.sql_errno)
      if errno == 0 then errno = -1 end
      return 0, errno
   end
   local rows = 0
   if rs ~= nil and rs.nfields > 0 then
      rows = tonumber(rs.nrows)
   end
   return rows, nil
end

local function body(f, n)
   local text = n > 0 and f:read(n) or ""
   f:read(1)  -- its newline
   return text
end

local function write_tally(tally, path)
   local out = assert(io.open(path, "w"))
   for d, s in pairs(tally.digests) do
      out:write(string.format("d %d %d %d %.6f\n", d, s.count, s.rows, s.total))
      for b, n in pairs(s.buckets) do out:write(string.format("b %d %d %d\n", d, b, n)) end
      for e, n in pairs(s.errors) do out:write(string.format("e %d %d %d\n", d, e, n)) end
   end
   for why, n in pairs(tally.skipped) do out:write("s " .. why .. "|" .. n .. "\n") end
   for session in pairs(tally.sessions) do out:write("c " .. session .. "\n") end
   out:close()
end

local function step(f, drv, conns, tally, measure_from)
   local header = f:read("*l")
   if header == nil then return false end
   local kind, session, a, b = header:match("^(%u) (%d+) ?(%-?%d*) ?(%d*)$")
   if kind == "Q" then
      local sql = body(f, tonumber(b))
      ffi.C.sb_event_start(sysbench.tid)
      local t = now_ms()
      local rows, errno = run_statement(conns[session], sql)
      local done = now_ms()
      ffi.C.sb_event_stop(sysbench.tid)
      if t >= measure_from then add(tally, tonumber(a), done - t, rows, errno) end
   elseif kind == "C" then
      conns[session] = connect(drv, tally, body(f, tonumber(a)))
      tally.sessions[session] = true
   elseif kind == "U" then
      use(conns[session], body(f, tonumber(a)))
   elseif kind == "X" then
      conns[session]:disconnect()
      conns[session] = nil
   else
      error("replay: unreadable record '" .. header .. "' in the split log")
   end
   return true
end

function thread_run(thread_id)
   sysbench.tid = thread_id
   local dir = sysbench.opt.replay_dir
   local f = assert(io.open(string.format("%s/client-%d.bin", dir, thread_id), "rb"))
   local drv = sysbench.sql.driver()
   local conns, tally = {}, tally_new()
   local measure_from = now_ms() + tonumber(sysbench.opt.replay_warmup) * 1000
   while ffi.C.sb_more_events(thread_id) and step(f, drv, conns, tally, measure_from) do
   end
   f:close()
   for _, con in pairs(conns) do con:disconnect() end
   write_tally(tally, string.format("%s/stats-%d.txt", dir, thread_id))
end
