import v8 from 'node:v8';

/**
 * V8 settings of the `backyard` command's process, set when this module is first imported (cli.ts imports it
 * before anything else, so that no request has run yet).
 *
 * `--no-allocation-site-pretenuring`: V8 watches the objects each object or array literal creates,
 * and once most of them outlived a young-generation GC (a scavenge) and a full GC, it decides that
 * the literal's optimized code allocates them straight in the old generation (`node
 * --trace-pretenuring-statistics`: "maybe tenure => tenure"). The decision is never taken back.
 * A burst in which objects live long, such as a batch of 1,000 creates in one transaction, makes
 * that decision for literals on every request's path: node-postgres's row objects among them. From
 * then on each request's rows are old as soon as they exist, the strings and arrays they hold are
 * reachable from the old generation until the next full GC, and every scavenge copies them there.
 * Measured on PostgreSQL after such a batch (equality of 100 rows, one connection, `node
 * --trace-gc-nvp`): 1.9 MB promoted per scavenge and 6.9 ms per scavenge with pretenuring; 14 KB
 * and 0.9 ms without it. A bare `node:http` server running the same query in the same process was
 * as affected, and one in a process that had not run the batch was not
 * (test/data-pretenuring.test.ts).
 *
 * Set here, after V8 has started, it has the same effect as on Node's command line (measured alike);
 * V8 still gathers its statistics, but the code it optimizes allocates in the young generation.
 * Node calls setFlagsFromString after start-up unsafe for flags that change behaviour already in
 * use: this one only changes which generation new objects are allocated in. An npm script or a
 * client's launcher need not pass it.
 */
v8.setFlagsFromString('--no-allocation-site-pretenuring');
