<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>LaunchOptions</name>
    <message>
        <location filename="../gui/launchoptions.cpp" line="+16"/>
        <source>Evolves fast GPU kernels and verifies them against a reference.</source>
        <translation>演化快速的 GPU 内核，并对照参考实现进行验证。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Show the tasks found under &lt;dir&gt;.</source>
        <translation>显示 &lt;目录&gt; 下找到的任务。</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+3"/>
        <source>dir</source>
        <translation>目录</translation>
    </message>
    <message>
        <location line="-1"/>
        <source>Open the project in &lt;dir&gt;.</source>
        <translation>打开 &lt;目录&gt; 中的项目。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Save an image of the window to &lt;file&gt; and quit.</source>
        <translation>将窗口截图保存到 &lt;文件&gt; 后退出。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>file</source>
        <translation>文件</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Unexpected argument: %1</source>
        <translation>意外的参数：%1</translation>
    </message>
</context>
<context>
    <name>kfgui::MainWindow</name>
    <message>
        <location filename="../gui/mainwindow.cpp" line="+22"/>
        <source>Kernel Foundry</source>
        <translation>Kernel Foundry</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 — Kernel Foundry</source>
        <translation>%1 — Kernel Foundry</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Open Tasks Folder…</source>
        <translation>打开任务文件夹(&amp;O)…</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;About Kernel Foundry</source>
        <translation>关于 Kernel Foundry(&amp;A)</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Open Tasks Folder</source>
        <translation>打开任务文件夹</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>About Kernel Foundry</source>
        <translation>关于 Kernel Foundry</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&lt;h3&gt;Kernel Foundry %1&lt;/h3&gt;&lt;p&gt;Evolves fast GPU kernels and verifies every candidate against the task&apos;s reference.&lt;/p&gt;</source>
        <translation>&lt;h3&gt;Kernel Foundry %1&lt;/h3&gt;&lt;p&gt;演化快速的 GPU 内核，并将每个候选内核与任务的参考实现进行对照验证。&lt;/p&gt;</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>No tasks folder found. Use File › Open Tasks Folder… or start with --tasks DIR.</source>
        <translation>未找到任务文件夹。请使用“文件 › 打开任务文件夹…”，或以 --tasks DIR 启动。</translation>
    </message>
    <message numerus="yes">
        <location line="+4"/>
        <source>%n task(s) in %1</source>
        <translation>
            <numerusform>%1 中有 %n 个任务</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location line="+2"/>
        <source>%n task(s) in %1, %2 failed to load</source>
        <translation>
            <numerusform>%1 中有 %n 个任务，其中 %2 个加载失败</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>kfgui::TaskDetailsView</name>
    <message>
        <location filename="../gui/taskdetailsview.cpp" line="+22"/>
        <source>CUDA</source>
        <translation>CUDA</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>host</source>
        <translation>主机</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>// This task has no %1 reference.</source>
        <translation>// 此任务没有 %1 参考实现。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>// Cannot read %1: %2</source>
        <translation>// 无法读取 %1：%2</translation>
    </message>
    <message>
        <location line="+37"/>
        <source>Case</source>
        <translation>用例</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Backends</source>
        <translation>后端</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Sizes</source>
        <translation>尺寸</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Parameters</source>
        <translation>参数</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Role</source>
        <translation>类型</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Entry point (CUDA)</source>
        <translation>入口函数 (CUDA)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>CUDA reference</source>
        <translation>CUDA 参考实现</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Host reference</source>
        <translation>主机参考实现</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>Task %1 · op class %2</source>
        <translation>任务 %1 · 算子类别 %2</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Task %1 · op class %2 · tags %3</source>
        <translation>任务 %1 · 算子类别 %2 · 标签 %3</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>No description.</source>
        <translation>无描述。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Sizes: %1 (%2)</source>
        <translation>尺寸：%1 (%2)</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>// The entry point cannot be generated: %1</source>
        <translation>// 无法生成入口函数：%1</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>primary</source>
        <translation>主用例</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>validation</source>
        <translation>验证用例</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>all</source>
        <translation>全部</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>This task could not be loaded.</source>
        <translation>无法加载此任务。</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>No task selected</source>
        <translation>未选择任务</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Choose a task on the left to see what it asks for.</source>
        <translation>在左侧选择一个任务以查看其要求。</translation>
    </message>
</context>
<context>
    <name>kfgui::TaskListModel</name>
    <message>
        <location filename="../gui/tasklistmodel.cpp" line="+41"/>
        <source>No tasks folder</source>
        <translation>没有任务文件夹</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The folder %1 does not exist</source>
        <translation>文件夹 %1 不存在</translation>
    </message>
    <message>
        <location line="+32"/>
        <source>%1
Failed to load: %2</source>
        <translation>%1
加载失败：%2</translation>
    </message>
</context>
</TS>
