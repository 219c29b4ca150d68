# SPDX-License-Identifier: GPL-2.0
# make check's tiers as CTest tests, beside the host unit tests
# (ZBATCH_CHECK=ON; scripts/check configures it and runs `ctest` once, one
# JUnit file). Labels: lint, unit, asan, package, harness and a label per
# guest tier (vm, zswap, swapdev, iaa, zswap-iaa, swapdev-iaa). A guest
# tier is a test that boots its guest (TIER.guest, scripts/check-guest:
# one guest at a time, RESOURCE_LOCK guest; it fails on a kernel report
# or a failed guest run) and a test per GoogleTest case and in-guest check
# that ran there, judged from the results it left (scripts/guest-result),
# in the build's results directory (ZBATCH_RESULTS_DIR, whatever the
# shell's ZBATCH_RESULTS says: scripts/check passes the same).
# Which tests run in which guest: tests/vm/tiers. Skips exit 77.
set(top ${PROJECT_SOURCE_DIR})
set(ZBATCH_RESULTS_DIR ${CMAKE_BINARY_DIR}/results CACHE PATH
  "Where make check's guests leave their results ($ZBATCH_RESULTS overrides it)")
option(ZBATCH_FULL "make check-full: soak tests at full length, IAA tiers unfiltered" OFF)
set(result ${Python3_EXECUTABLE} ${top}/scripts/guest-result --results ${ZBATCH_RESULTS_DIR})
if(ZBATCH_FULL)
  set(full 1)
else()
  set(full 0)
endif()
# what the guests and the host tiers read: the cache's, not the shell's
# (a ctest by hand after make check-debug reads and writes one place)
set(check_env "ZBATCH_RESULTS=${ZBATCH_RESULTS_DIR};ZBATCH_FULL=${full}")

# at nice 19, as the ASan build: beside the harness and the vm guest
# (checkpatch keeps both CPUs busy for half a minute), they must not take
# CPU from a guest whose tests measure idle CPUs (the vm tier's dispatch)
foreach(l checkpatch shell docs reports)
  add_test(NAME lint.${l} COMMAND nice -n 19 ${top}/scripts/check-lint ${l}
    WORKING_DIRECTORY ${top})
  set_tests_properties(lint.${l} PROPERTIES LABELS lint TIMEOUT 600 COST 950
    ENVIRONMENT "${check_env}")
endforeach()
# make install and the kselftest install staged for the vm guest's
# modprobe, kselftest and boot unit checks (about 10 s: the vm guest
# waits for it, beside the harness guest); then the DKMS .deb, dkms
# building and signing it, at nice 19 beside the guests (nothing waits
# for it; about a minute of CPU)
add_test(NAME package.stage COMMAND ${top}/scripts/check-package --stage-only
  ${CMAKE_BINARY_DIR}/stage WORKING_DIRECTORY ${top})
# a fixture, not an order: a run of the vm tier alone (make check-vm, a
# -R or -L filter) stages the tree it tests, never an older stage
set_tests_properties(package.stage PROPERTIES LABELS package TIMEOUT 600 COST 990
  FIXTURES_SETUP zbatch_stage ENVIRONMENT "${check_env}")
add_test(NAME package COMMAND nice -n 19 ${top}/scripts/check-package --deb-only
  WORKING_DIRECTORY ${top})
set_tests_properties(package PROPERTIES LABELS package TIMEOUT 1200 COST 20
  ENVIRONMENT "${check_env}")
# the host tests under ASan and UBSan, at nice 19 beside the guests
add_test(NAME asan COMMAND ${top}/scripts/check-asan WORKING_DIRECTORY ${top})
set_tests_properties(asan PROPERTIES LABELS asan TIMEOUT 3600 COST 10
  ENVIRONMENT "${check_env}")
# the guest kernel's checkers must fail a run (the canary's bugs)
add_test(NAME harness COMMAND ${top}/scripts/check-harness WORKING_DIRECTORY ${top})
set_tests_properties(harness PROPERTIES LABELS harness TIMEOUT 1200 RESOURCE_LOCK guest
  COST 1000 ENVIRONMENT "${check_env}")

# tests/vm/tiers: TIER RESULT BINARY FILTER [FILTER_FULL]
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${top}/tests/vm/tiers)
file(STRINGS ${top}/tests/vm/tiers tier_lines REGEX "^[^#]")
set(guest_tiers vm zswap swapdev iaa zswap-iaa swapdev-iaa)
set(prev harness)
foreach(tier ${guest_tiers})
  add_test(NAME ${tier}.guest COMMAND ${top}/scripts/check-guest ${tier} WORKING_DIRECTORY ${top})
  set_tests_properties(${tier}.guest PROPERTIES LABELS ${tier} RESOURCE_LOCK guest
    TIMEOUT 6000 COST 1000 DEPENDS "${prev}" ENVIRONMENT "${check_env}")
  set(prev ${tier}.guest)
endforeach()
# the vm guest's install, modprobe and kselftest checks read the stage
set_tests_properties(vm.guest PROPERTIES FIXTURES_REQUIRED zbatch_stage)
set(n 0)
set(seen "")
foreach(line ${tier_lines})
  string(STRIP "${line}" line)
  if(line STREQUAL "")
    continue()
  endif()
  # the guest scripts read the same file with awk (scripts/guest-load)
  if(NOT line MATCHES "^([a-z-]+)[ \t]+([a-z-]+)[ \t]+(zbatch_[a-z_]+)[ \t]+[^ \t=]+([ \t]+[^ \t=]+)?([ \t]+[^ \t=]+=[^ \t]*)*$")
    message(FATAL_ERROR "tests/vm/tiers: not TIER RESULT BINARY FILTER [FILTER_FULL] [VAR=VALUE...]: ${line}")
  endif()
  if(NOT CMAKE_MATCH_1 IN_LIST guest_tiers)
    message(FATAL_ERROR "tests/vm/tiers: no tier ${CMAKE_MATCH_1} (${guest_tiers}): ${line}")
  endif()
  if("${CMAKE_MATCH_1} ${CMAKE_MATCH_2}" IN_LIST seen)
    message(FATAL_ERROR "tests/vm/tiers: ${CMAKE_MATCH_1} ${CMAKE_MATCH_2} twice")
  endif()
  list(APPEND seen "${CMAKE_MATCH_1} ${CMAKE_MATCH_2}")
  string(REGEX REPLACE "[ \t]+" ";" f "${line}")
  list(GET f 0 tier)
  list(GET f 1 res)
  list(GET f 2 bin)
  list(GET f 3 filter)
  list(LENGTH f nf)
  set(envs --env ZBATCH_FULL=${full})
  set(full_filter "${filter}")
  foreach(i RANGE 4 ${nf})
    if(i LESS nf)
      list(GET f ${i} w)
      if(w MATCHES "=")
        list(APPEND envs --env ${w})
      elseif(i EQUAL 4)
        set(full_filter "${w}")
      endif()
    endif()
  endforeach()
  if(ZBATCH_FULL)
    set(filter "${full_filter}")
  endif()
  # never run on the host: CTest runs scripts/guest-result in their
  # place, with the line's environment for the listing (the call below
  # reads the property; every vm binary has a line)
  set_target_properties(${bin} PROPERTIES CROSSCOMPILING_EMULATOR "${result};${envs}")
  if(res STREQUAL tier)
    set(prefix "${tier}.")
  else()
    set(prefix "${tier}.${res}.")
  endif()
  math(EXPR n "${n} + 1")
  gtest_discover_tests(${bin} TEST_PREFIX ${prefix} TEST_FILTER "${filter}"
    EXTRA_ARGS --zbatch-result=${tier}/${res}.xml
    TEST_LIST tier_tests_${n} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 30
    PROPERTIES LABELS ${tier} DEPENDS ${tier}.guest TIMEOUT 60)
  # the run as a whole: its status, failures in no listed test
  add_test(NAME ${prefix}results COMMAND ${result} ${envs} --whole ${tier}/${res}
    $<TARGET_FILE:${bin}> --gtest_filter=${filter})
  set_tests_properties(${prefix}results PROPERTIES LABELS ${tier} DEPENDS ${tier}.guest
    TIMEOUT 60)
endforeach()
set_target_properties(zbatch_vm_tests zbatch_vm_zswap_tests zbatch_vm_iaa_tests
  zbatch_vm_swapdev_tests PROPERTIES CROSSCOMPILING_EMULATOR "${result}")

# the vm guest's other checks (scripts/guest-check) and the self-tests' KTAP
foreach(c "kselftest Kselftest.RunKselftestRunsZbatchSelftests"
    "docs Docs.EveryModuleFileIsInTheAbiDocument"
    "fuzz Fuzz.DevAndSysfsKeepTheirContract"
    "install Install.ModprobeLoadsItWithItsDependencies"
    "boot-unit Install.BootUnitSetsUpRestartsAndTearsDownSwap"
    "bench BenchSmoke.EveryCodecModeBatchSizeAndSwapRecord")
  string(REPLACE " " ";" c "${c}")
  list(GET c 0 file)
  list(GET c 1 name)
  add_test(NAME vm.${name} COMMAND ${result} --check vm/checks/${file})
  set_tests_properties(vm.${name} PROPERTIES LABELS vm DEPENDS vm.guest SKIP_RETURN_CODE 77
    TIMEOUT 60)
endforeach()
add_test(NAME vm.SelfTests.KtapFromDebugfs COMMAND ${result} --ktap vm/selftest.ktap)
set_tests_properties(vm.SelfTests.KtapFromDebugfs PROPERTIES LABELS vm DEPENDS vm.guest
  SKIP_RETURN_CODE 77 TIMEOUT 60)
