# Sourced by bench run scripts: ElasticMQ and memcached on loopback, reused when they already
# answer, else started (state in $STATE) and stopped by `cleanup` at exit. Needs STATE and say().
started=()
# name=pid of each server started here, for a bench that reads their CPU (bench/lib/server-cpu.ts).
server_pids=()
dynamodb_started=""
cleanup() {
  for pid in "${started[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true # return only once they are gone (ports free)
  if [[ -n $dynamodb_started ]]; then SQS_JOBS_DYNAMODB_PORT="$dynamodb_started" bash infra/local/dynamodb.sh down || true; fi
}

# DynamoDB Local on port $1 (through infra/local/dynamodb.sh): reused when it answers, else started
# here and stopped by `cleanup`.
ensure_dynamodb() {
  if SQS_JOBS_DYNAMODB_PORT="$1" bash infra/local/dynamodb.sh status >/dev/null 2>&1; then
    say "reusing the DynamoDB Local that answers on 127.0.0.1:$1"
  else
    dynamodb_started="$1"
    SQS_JOBS_DYNAMODB_PORT="$1" bash infra/local/dynamodb.sh up
  fi
}

emq_answers() { curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$1/?Action=ListQueues"; }
mc_answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# ElasticMQ's classpath: the one infra/local/elasticmq.sh resolved (read, never written), else our own.
elasticmq_classpath() {
  local shared=.local/elasticmq.classpath pom=infra/local/elasticmq/pom.xml
  if [[ -s $shared && $shared -nt $pom ]]; then cat "$shared"; return; fi
  if [[ ! -s $STATE/elasticmq.classpath || $pom -nt $STATE/elasticmq.classpath ]]; then
    say "resolving ElasticMQ from Maven Central (first run only)"
    mvn -q -B -f "$pom" dependency:build-classpath -Dmdep.outputFile="$PWD/$STATE/elasticmq.classpath" >"$STATE/mvn.log" 2>&1 \
      || { say "maven failed; see $STATE/mvn.log"; exit 1; }
  fi
  cat "$STATE/elasticmq.classpath"
}

# ensure_elasticmq PORT
ensure_elasticmq() {
  local port=$1
  if emq_answers "$port"; then say "reusing the ElasticMQ that answers on 127.0.0.1:$port"; return; fi
  command -v java >/dev/null || { say "ElasticMQ needs Java: sudo apt-get install -y default-jre-headless maven"; exit 1; }
  sed "s/9324/$port/g" infra/local/elasticmq/elasticmq.conf >"$STATE/elasticmq.conf"
  java -Xmx1g -Dconfig.file="$STATE/elasticmq.conf" -cp "$(elasticmq_classpath)" org.elasticmq.server.Main >"$STATE/elasticmq.log" 2>&1 &
  started+=("$!")
  server_pids+=("elasticmq=$!")
  for _ in $(seq 150); do emq_answers "$port" && break; sleep 0.2; done
  emq_answers "$port" || { say "ElasticMQ did not answer within 30 s; see $STATE/elasticmq.log"; exit 1; }
}

# ensure_memcached PORT
ensure_memcached() {
  local port=$1
  if mc_answers "$port"; then say "reusing the memcached that answers on 127.0.0.1:$port"; return; fi
  command -v memcached >/dev/null || { say "memcached is missing: sudo apt-get install -y memcached"; exit 1; }
  memcached -l 127.0.0.1 -p "$port" -U 0 -m 64 $([[ $(id -u) -eq 0 ]] && echo "-u nobody") >"$STATE/memcached.log" 2>&1 &
  started+=("$!")
  server_pids+=("memcached=$!")
  for _ in $(seq 50); do mc_answers "$port" && break; sleep 0.1; done
  mc_answers "$port" || { say "memcached did not answer on 127.0.0.1:$port"; exit 1; }
}
