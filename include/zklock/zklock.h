// zklock/zklock.h: everything a user of zklock includes.
#pragma once

#include "zklock/acquisition.h"
#include "zklock/contender.h"
#include "zklock/errors.h"
#include "zklock/fenced_write.h"
#include "zklock/fencing_token.h"
#include "zklock/guard.h"
#include "zklock/hold.h"
#include "zklock/lock_request.h"
#include "zklock/lock_set.h"
#include "zklock/lock_state.h"
#include "zklock/mutex.h"
#include "zklock/revocation.h"
#include "zklock/semaphore.h"
#include "zklock/session.h"
#include "zklock/shared_mutex.h"
#include "zklock/version.h"
