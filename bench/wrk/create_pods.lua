-- wrk script for bench/apiserver.py's CREATE measure: POST a pod with a unique name on every
-- request and count the 201 Created answers (wrk's own count includes every response).
--
--   wrk -s create_pods.lua <url> -- <body template file> <pods path> <name prefix>
--
-- The template is the pod's JSON with the placeholder __NAME__ once; each thread names its
-- pods <prefix>-<thread>-<counter>, so names never repeat within a run. done() prints
--   CREATED <n>   OTHER <n>   FIRST_ERROR <status> <body>
-- for the benchmark to parse.

local threads = {}

function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end

function init(args)
  local file = assert(io.open(args[1], "rb"))
  local template = file:read("*a")
  file:close()
  local at = assert(string.find(template, "__NAME__", 1, true), "no __NAME__ in template")
  head = string.sub(template, 1, at - 1)
  tail = string.sub(template, at + string.len("__NAME__"))
  path = args[2]
  prefix = args[3] .. "-" .. id .. "-"
  -- a User-Agent as every real client sends: without one the manager is "unknown" (upstream)
  headers = { ["Content-Type"] = "application/json", ["Accept"] = "application/json",
              ["User-Agent"] = "wrk-bench/1.0" }
  counter = 0
  created = 0
  others = 0
  first_error = ""
end

function request()
  counter = counter + 1
  return wrk.format("POST", path, headers, head .. prefix .. counter .. tail)
end

function response(status, headers, body)
  if status == 201 then
    created = created + 1
  else
    others = others + 1
    if first_error == "" then
      first_error = status .. " " .. string.sub(body or "", 1, 300)
    end
  end
end

function done(summary, latency, requests)
  local c, o, err = 0, 0, ""
  for _, thread in ipairs(threads) do
    c = c + thread:get("created")
    o = o + thread:get("others")
    if err == "" then err = thread:get("first_error") end
  end
  io.write(string.format("CREATED %d\nOTHER %d\n", c, o))
  if err ~= "" then io.write("FIRST_ERROR " .. string.gsub(err, "\n", " ") .. "\n") end
end
