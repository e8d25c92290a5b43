"""Schema tables for batch/v1 (see openapi_schemas.py for the notation). Kubernetes piece: the
doc comments of k8s.io/api/batch/v1 (types.go) as kube-openapi publishes them, shortened; the
fields not listed here (podFailurePolicy's rules, successPolicy's, uncountedTerminatedPods...)
are completed from the protobuf description with generated one-liners.
"""

from __future__ import annotations

KINDS = frozenset({"batch.Job", "batch.CronJob"})
UNLISTED: frozenset[str] = frozenset()
RAW: dict = {}

_CONDITION = ("[batch.JobCondition", "The latest available observations of an object's "
              "current state. When a Job fails, one of the conditions will have type "
              "\"Failed\" and status true. When a Job is suspended, one of the conditions will "
              "have type \"Suspended\" and status true; when the Job is resumed, the status of "
              "this condition will become false. When a Job is completed, one of the "
              "conditions will have type \"Complete\" and status true.", "type")

TYPES = {
    "batch.Job": ("Job represents the configuration of a single job.", {
        "spec": ("batch.JobSpec", "Specification of the desired behavior of a job."),
        "status": ("batch.JobStatus", "Current status of a job."),
    }),
    "batch.JobSpec": ("JobSpec describes how the job execution will look like.", {
        "parallelism": ("int32", "Specifies the maximum desired number of pods the job should "
                        "run at any given time. Defaults to 1."),
        "completions": ("int32", "Specifies the desired number of successfully finished pods "
                        "the job should be run with. Setting to null means that the success of "
                        "any pod signals the success of all pods."),
        "activeDeadlineSeconds": ("int64", "Specifies the duration in seconds relative to the "
                                  "startTime that the job may be continuously active before "
                                  "the system tries to terminate it; value must be positive "
                                  "integer."),
        "backoffLimit": ("int32", "Specifies the number of retries before marking this job "
                         "failed. Defaults to 6"),
        "backoffLimitPerIndex": ("int32", "Specifies the limit for the number of retries "
                                 "within an index before marking this index as failed. Only "
                                 "for Indexed Jobs."),
        "maxFailedIndexes": ("int32", "Specifies the maximal number of failed indexes before "
                             "marking the Job as failed, when backoffLimitPerIndex is set."),
        "selector": ("LabelSelector", "A label query over pods that should match the pod "
                     "count. Normally, the system sets this field for you."),
        "manualSelector": ("boolean", "manualSelector controls generation of pod labels and "
                           "pod selectors. Leave `manualSelector` unset unless you are certain "
                           "what you are doing."),
        "template": ("core.PodTemplateSpec", "Describes the pod that will be created when "
                     "executing a job. The only allowed template.spec.restartPolicy values are "
                     "\"Never\" or \"OnFailure\"."),
        "ttlSecondsAfterFinished": ("int32", "ttlSecondsAfterFinished limits the lifetime of "
                                    "a Job that has finished execution (either Complete or "
                                    "Failed). After it finishes, the Job is eligible to be "
                                    "automatically deleted, with its pods."),
        "completionMode": ("string", "completionMode specifies how Pod completions are "
                           "tracked. It can be `NonIndexed` (default) or `Indexed`."),
        "suspend": ("boolean", "suspend specifies whether the Job controller should create "
                    "Pods or not. Defaults to false."),
        "podFailurePolicy": ("batch.PodFailurePolicy", "Specifies the policy of handling "
                             "failed pods. In particular, it allows to specify the set of "
                             "actions and conditions which need to be satisfied to take the "
                             "associated action."),
        "successPolicy": ("batch.SuccessPolicy", "successPolicy specifies the policy when the "
                          "Job can be declared as succeeded (Indexed Jobs only)."),
        "podReplacementPolicy": ("string", "podReplacementPolicy specifies when to create "
                                 "replacement Pods: TerminatingOrFailed or Failed."),
    }, ("template",)),
    "batch.JobStatus": ("JobStatus represents the current state of a Job.", {
        "conditions": _CONDITION,
        "startTime": ("Time", "Represents time when the job controller started processing a "
                      "job."),
        "completionTime": ("Time", "Represents time when the job was completed."),
        "active": ("int32", "The number of pending and running pods which are not terminating "
                   "(without a deletionTimestamp)."),
        "succeeded": ("int32", "The number of pods which reached phase Succeeded."),
        "failed": ("int32", "The number of pods which reached phase Failed."),
        "terminating": ("int32", "The number of pods which are terminating (that have "
                        "deletionTimestamp)."),
        "ready": ("int32", "The number of active pods which have a Ready condition and are not "
                  "terminating (without a deletionTimestamp)."),
        "completedIndexes": ("string", "completedIndexes holds the completed indexes when "
                             ".spec.completionMode = \"Indexed\" in a text format, e.g. "
                             "\"1,3-5,7\"."),
        "failedIndexes": ("string", "FailedIndexes holds the failed indexes when "
                          "spec.backoffLimitPerIndex is set."),
        "uncountedTerminatedPods": ("batch.UncountedTerminatedPods", "uncountedTerminatedPods "
                                    "holds the UIDs of Pods that have terminated but the job "
                                    "controller hasn't yet accounted for in the status "
                                    "counters."),
    }),
    "batch.JobCondition": ("JobCondition describes current state of a job.", {
        "type": ("string", "Type of job condition, Complete or Failed."),
        "status": ("string", "Status of the condition, one of True, False, Unknown."),
        "lastProbeTime": ("Time", "Last time the condition was checked."),
        "lastTransitionTime": ("Time", "Last time the condition transit from one status to "
                               "another."),
        "reason": ("string", "(brief) reason for the condition's last transition."),
        "message": ("string", "Human readable message indicating details about last "
                    "transition."),
    }, ("type", "status")),
    "batch.CronJob": ("CronJob represents the configuration of a single cron job.", {
        "spec": ("batch.CronJobSpec", "Specification of the desired behavior of a cron job, "
                 "including the schedule."),
        "status": ("batch.CronJobStatus", "Current status of a cron job."),
    }),
    "batch.CronJobSpec": ("CronJobSpec describes how the job execution will look like and "
                          "when it will actually run.", {
        "schedule": ("string", "The schedule in Cron format, see "
                     "https://en.wikipedia.org/wiki/Cron."),
        "timeZone": ("string", "The time zone name for the given schedule, see "
                     "https://en.wikipedia.org/wiki/List_of_tz_database_time_zones."),
        "startingDeadlineSeconds": ("int64", "Optional deadline in seconds for starting the "
                                    "job if it misses scheduled time for any reason. Missed "
                                    "jobs executions will be counted as failed ones."),
        "concurrencyPolicy": ("string", "Specifies how to treat concurrent executions of a "
                              "Job. Valid values are: \"Allow\" (default), \"Forbid\", "
                              "\"Replace\"."),
        "suspend": ("boolean", "This flag tells the controller to suspend subsequent "
                    "executions, it does not apply to already started executions. Defaults "
                    "to false."),
        "jobTemplate": ("batch.JobTemplateSpec", "Specifies the job that will be created when "
                        "executing a CronJob."),
        "successfulJobsHistoryLimit": ("int32", "The number of successful finished jobs to "
                                       "retain. Defaults to 3."),
        "failedJobsHistoryLimit": ("int32", "The number of failed finished jobs to retain. "
                                   "Defaults to 1."),
    }, ("schedule", "jobTemplate")),
    "batch.JobTemplateSpec": ("JobTemplateSpec describes the data a Job should have when "
                              "created from a template", {
        "metadata": ("ObjectMeta", "Standard object's metadata of the jobs created from this "
                     "template."),
        "spec": ("batch.JobSpec", "Specification of the desired behavior of the job."),
    }),
    "batch.CronJobStatus": ("CronJobStatus represents the current state of a cron job.", {
        "active": ("[core.ObjectReference", "A list of pointers to currently running jobs."),
        "lastScheduleTime": ("Time", "Information when was the last time the job was "
                             "successfully scheduled."),
        "lastSuccessfulTime": ("Time", "Information when was the last time the job "
                               "successfully completed."),
    }),
}
