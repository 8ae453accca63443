# Test helpers: every test carries the label cpu or gpu; gpu tests skip with code 77 when no device.
function(headroom_cpu_test name)
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE headroom::core GTest::gtest GTest::gtest_main)
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS cpu)
endfunction()

function(headroom_gpu_test name)
  add_test(NAME ${name} COMMAND ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
endfunction()
