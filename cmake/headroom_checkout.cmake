# headroom_checkout_commit(TARGET DIR MACRO): compiles TARGET with MACRO="<commit>", the first line
# of DIR/COMMIT, or "unknown" without that file. The engine checkouts the build compiles against
# (FlashInfer, flash-attention) are often archives without git metadata; a COMMIT file beside
# their sources names what was read, and the drivers and tests report it.
function(headroom_checkout_commit target dir macro)
  set(commit unknown)
  if(EXISTS ${dir}/COMMIT)
    file(STRINGS ${dir}/COMMIT commit LIMIT_COUNT 1)
  endif()
  target_compile_definitions(${target} PRIVATE ${macro}="${commit}")
endfunction()
